package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/metrics"
)

// simPower returns the power model that sim accounts energy with and applies
// contention from: the cluster file's (name, f), or the defaults for a
// --gpus cluster (f nil). It also returns the GPU types that have no power
// figures (a type declared in the cluster file without a power block): with
// any, the run accounts no energy, but contention still works, since it
// needs only the nodes' figures.
func simPower(name string, f *config.File, c *model.Cluster) (*power.Cluster, []string, error) {
	if f != nil {
		p, missing, err := f.PartialPower(name, c)
		if err != nil {
			return nil, nil, usageError{err}
		}
		return p, missing, nil
	}
	p := &power.Cluster{Types: make([]power.GPUPower, len(c.Types)), Nodes: make([]power.NodePower, len(c.Nodes))}
	var missing []string
	for t, typ := range c.Types {
		g, ok := power.Lookup(typ.Name)
		if !ok {
			missing = append(missing, typ.Name)
		}
		p.Types[t] = g
	}
	for i := range p.Nodes {
		p.Nodes[i] = power.DefaultNode()
	}
	return p, missing, nil
}

// warnNoPower prints the one warning of a run that accounts no energy
// because GPU types have no power figures; nothing when all have.
func warnNoPower(stderr io.Writer, missing []string) {
	if len(missing) == 0 {
		return
	}
	quoted := make([]string, len(missing))
	for i, m := range missing {
		quoted[i] = strconv.Quote(m)
	}
	noun := "type " + quoted[0] + " has"
	if len(missing) > 1 {
		noun = "types " + strings.Join(quoted, ", ") + " have"
	}
	fmt.Fprintf(stderr, "gpusched: warning: GPU %s no power figures (give idle_w and max_w in a power block, docs/CLUSTER.md): energy is not reported\n", noun)
}

// setEnergy copies the run's energy into the summary; without accounting
// the summary's energy stays unknown.
func setEnergy(sum *metrics.Summary, res *sim.Result) {
	if res.Energy != nil {
		kwh := res.Energy.TotalKWh
		sum.EnergyKWh = &kwh
	}
}

// contentionOn returns whether the run applies node contention: as
// --contention says when given, otherwise whether the cluster file
// declares it (contention_knee or contention_slowdown in a node's power
// block); a --gpus cluster declares none.
func contentionOn(o *simOptions, f *config.File) bool {
	if o.given("contention") {
		return o.contention
	}
	return f != nil && f.DeclaresContention()
}

// runPower makes p the power model that the run applies: with sleep false
// (--sleep=false) no node sleeps; without contention no node slows its
// jobs down, so that the energy placer's thresholds are calibrated on the
// curve the run has (without contention it has no rising region).
func runPower(p *power.Cluster, sleep, contention bool) {
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if !sleep {
			n.Sleeps = false
		}
		if !contention {
			n.Contention = power.Contention{Knee: 1}
		}
	}
}

// energyInvariant reports whether the energy of the run of in cannot
// depend on which nodes of a GPU type run the jobs: no node sleeps, no
// node slows co-located jobs down (power.Cluster.NodesMatter) and no job
// is staged from a storage device (staging time, and the GPUs it holds,
// differ between nodes). Only the GPU types chosen and the timing then
// change the energy, so seed 002's node choice cannot.
func energyInvariant(in *simInputs) bool {
	if in.power.NodesMatter(in.contention) {
		return false
	}
	if in.network != nil {
		for i := range in.jobs {
			if in.jobs[i].DatasetMB > 0 {
				return false
			}
		}
	}
	return true
}

// warnEnergyPlacer prints one warning when --placer energy runs where its
// node choice cannot change the energy (energyInvariant), saying what would.
func warnEnergyPlacer(stderr io.Writer, placerName string, in *simInputs) {
	if placerName != "energy" || !energyInvariant(in) {
		return
	}
	fmt.Fprintln(stderr, "gpusched: warning: --placer energy: no node sleeps and contention is off, so the energy "+
		"does not depend on which node runs a job; let idle nodes sleep (drop --sleep=false, or sleeps: false from "+
		"the cluster file) or apply --contention for the energy placer to matter (docs/ENERGY.md)")
}
