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

// newEngine builds the engine of cfg; with the energy placer, one that
// places through l's livePlacer.
func newEngine(cfg Config, l *Live) (*engine.Engine, error) {
	if cfg.Names.Placer != "energy" {
		return recipe.New(cfg.Names, *cfg.Options)
	}
	l.placer = &livePlacer{}
	return recipe.NewWithPlacer(cfg.Names, *cfg.Options, l.placer)
}

// refreshEnergy rebuilds the energy placer's inputs for the current
// cluster when they changed. Called with s.mu held, after rebuild.
func (l *Live) refreshEnergy() {
	l := s.live
	if !l.dirty && l.in.cluster == s.cluster {
		return
	}
	l.dirty = false
	l.in = energyInputs{cluster: s.cluster}
	if l.placer != nil {
		l.placer.cur = nil
	}
	if s.cluster == nil {
		return
	}
	table, classes := s.energyTable(s.cluster)
	net, err := s.liveNetwork(s.cluster)
	if err != nil {
		l.log.Error("cannot build the network of measured distances; placing without it", "err", err)
		net = nil
	}
	l.in = energyInputs{cluster: s.cluster, table: table, net: net, class: classes}
	if l.placer == nil {
		return
	}
	e, err := placer.NewEnergy(s.cluster, table, net)
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
func (l *Live) energyTable(c *model.Cluster) (*placer.EnergyTable, []*nodeClass) {
	families := []string{placer.DefaultFamily}
	add := func(f string) {
		if !slices.Contains(families, f) {
			families = append(families, f)
		}
	}
	for _, j := range s.active {
		add(placer.Family(j.rec.Model))
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
		cl := l.classOf(s.nodes[mn.Name])
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
				v := s.thresholdsOf(cl, f)
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
func (l *Live) liveNetwork(c *model.Cluster) (*network.Network, error) {
	devs := s.liveDevices()
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
			links[i][k] = s.link(mn.Name, d)
		}
	}
	return network.NewDirect(storage, links)
}

// loadState returns node i's load state for algorithm type family under the
// thresholds in use, with busy of its GPUs busy (0 without inputs).
func (l *Live) loadState(i, busy int, family string) int {
	in := &l.in
	if in.table == nil || i >= len(in.class) {
		return 0
	}
	col, ok := in.table.Families[family]
	if !ok {
		col = 0
	}
	th := in.table.Th[in.table.Class[i]][col]
	return th.State(busy, s.cluster.Nodes[i].GPUs)
}

// energyOptions returns the engine options with the energy placer's
// current inputs, for a forecast that runs the same placer.
func (l *Live) energyOptions(o recipe.Options) recipe.Options {
	if in := l.in; in.table != nil && in.cluster == s.cluster {
		o.Energy = recipe.EnergyInputs{Cluster: in.cluster, Table: in.table, Network: in.net}
	}
	return o
}
