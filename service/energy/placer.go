package energy

import (
	"slices"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/recipe"
)

// The energy placer in the service (seed 002): its inputs — the cluster,
// every node's thresholds per algorithm type (learned, else its class's
// defaults), the classes' stable levels and the network of measured
// distances — are rebuilt whenever one of them changes (liveState.dirty),
// before the next round, and the engine's placer (livePlacer) delegates to
// the placer built from them.

// energyInputs are the energy placer's inputs for one cluster.
type energyInputs struct {
	cluster *model.Cluster
	table   *placer.EnergyTable
	net     *network.Network
	// class is every node's class, in the cluster's order.
	class []*nodeClass
}

// livePlacer is the engine's placer when the service runs --placer
// energy: it places with the placer built from the current inputs.
type livePlacer struct{ cur *placer.Energy }

// Name returns "energy".
func (*livePlacer) Name() string { return "energy" }

// Place implements engine.Placer: nothing until the inputs are built.
func (p *livePlacer) Place(s *model.State, pool *engine.Pool, j *model.Job, n int, types engine.TypeSet) engine.Placement {
	if p.cur == nil {
		return engine.Placement{}
	}
	return p.cur.Place(s, pool, j, n, types)
}

// NewEngine builds the engine of names and opts; with the energy placer,
// one that places through l's placer, built from the live inputs.
func (l *Live) NewEngine(names recipe.Names, opts recipe.Options) (*engine.Engine, error) {
	if names.Placer != "energy" {
		return recipe.New(names, opts)
	}
	l.placer = &livePlacer{}
	return recipe.NewWithPlacer(names, opts, l.placer)
}

// Invalidate makes the next Refresh rebuild the inputs.
func (l *Live) Invalidate() { l.dirty = true }

// Refresh rebuilds the energy placer's inputs for w's current cluster
// when they changed. The shell calls it before every round, after it
// rebuilt its cluster.
func (l *Live) Refresh(w World) {
	cluster, _ := w.Cluster()
	if !l.dirty && l.in.cluster == cluster {
		return
	}
	l.dirty = false
	l.in = energyInputs{cluster: cluster}
	if l.placer != nil {
		l.placer.cur = nil
	}
	if cluster == nil {
		return
	}
	table, classes := l.energyTable(w, cluster)
	net, err := l.liveNetwork(w, cluster)
	if err != nil {
		l.log.Error("cannot build the network of measured distances; placing without it", "err", err)
		net = nil
	}
	l.in = energyInputs{cluster: cluster, table: table, net: net, class: classes}
	if l.placer == nil {
		return
	}
	e, err := placer.NewEnergy(cluster, table, net)
	if err != nil {
		l.log.Error("cannot build the energy placer; jobs wait", "err", err)
		return
	}
	l.placer.cur = e
}

// energyTable builds seed 002's type→thresholds table of cluster c (claim
// 4): a row per class, a column per algorithm type (the default type, the
// types of the active jobs and those learned), and the classes' stable
// levels.
func (l *Live) energyTable(w World, c *model.Cluster) (*placer.EnergyTable, []*nodeClass) {
	families := []string{placer.DefaultFamily}
	add := func(f string) {
		if !slices.Contains(families, f) {
			families = append(families, f)
		}
	}
	models, _ := w.Active()
	for _, m := range models {
		add(placer.Family(m))
	}
	for k, ls := range l.learned {
		if ls.ok {
			add(k.family)
		}
	}
	slices.Sort(families[1:])
	t := &placer.EnergyTable{Families: map[string]int{}, Class: make([]int, len(c.Nodes))}
	for k, f := range families {
		t.Families[f] = k
	}
	if l.cfg.SuspendIdle {
		t.Sleeps = make([]bool, len(c.Nodes))
	}
	rows := map[string]int{}
	classes := make([]*nodeClass, len(c.Nodes))
	for i, mn := range c.Nodes {
		cl := l.classOf(node(w, mn.Name))
		classes[i] = cl
		if t.Sleeps != nil {
			t.Sleeps[i] = true
		}
		k, ok := rows[cl.name]
		if !ok {
			k = len(t.Th)
			rows[cl.name] = k
			th, cost := make([]placer.LoadThresholds, len(families)), make([]float64, len(families))
			for col, f := range families {
				v := l.thresholdsOf(cl, f)
				th[col], cost[col] = placer.LoadThresholds{Th1: v.Th1, Th2: max(v.Th1, v.Th2)}, max(v.Level, 0)
			}
			t.Th, t.Cost = append(t.Th, th), append(t.Cost, cost)
		}
		t.Class[i] = k
	}
	return t, classes
}

// liveNetwork builds the network of measured distances of cluster c (nil
// when no device has an endpoint): a direct network, in which a job's
// upload address is the name of its data's device (modelJob sets it).
func (l *Live) liveNetwork(w World, c *model.Cluster) (*network.Network, error) {
	devs := l.liveDevices(w)
	if len(devs) == 0 {
		return nil, nil
	}
	storage := make([]network.Storage, len(devs))
	for k, d := range devs {
		storage[k] = network.Storage{Name: d.name, Interfaces: []network.Interface{{Name: "probe",
			BandwidthGbps: network.DefaultTopology().CrossRack.BandwidthGbps, Quality: 1}}}
	}
	links := make([][]network.Link, len(c.Nodes))
	for i, mn := range c.Nodes {
		links[i] = make([]network.Link, len(devs))
		for k, d := range devs {
			links[i][k] = l.link(mn.Name, d)
		}
	}
	return network.NewDirect(storage, links)
}

// LoadState returns node i's load state for algorithm type family under
// the thresholds in use, with busy of its GPUs busy (0 without inputs).
func (l *Live) LoadState(w World, i, busy int, family string) int {
	in := &l.in
	if in.table == nil || i >= len(in.class) {
		return 0
	}
	col, ok := in.table.Families[family]
	if !ok {
		col = 0
	}
	th := in.table.Th[in.table.Class[i]][col]
	cluster, _ := w.Cluster()
	return th.State(busy, cluster.Nodes[i].GPUs)
}

// Options returns the engine options with the energy placer's current
// inputs for cluster, for a forecast that runs the same placer.
func (l *Live) Options(o recipe.Options, cluster *model.Cluster) recipe.Options {
	if in := l.in; in.table != nil && in.cluster == cluster {
		o.Energy = recipe.EnergyInputs{Cluster: in.cluster, Table: in.table, Network: in.net}
	}
	return o
}
