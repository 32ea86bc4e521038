package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/metrics"
	"github.com/gpusched/gpusched/model"
	"github.com/gpusched/gpusched/power"
	"github.com/gpusched/gpusched/sim"
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
