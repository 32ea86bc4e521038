package scheduler

import (
	"cmp"
	"time"

	"maps"
	"slices"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/energy"
	"github.com/gpusched/gpusched/service/jobs"
	"github.com/gpusched/gpusched/service/nodes"
)

// Live energy (package energy: power readings, the nodes' and jobs'
// energy, learned thresholds, measured distances, the energy placer's
// inputs, idle nodes, the report) reads the scheduler through world and
// charges the jobs' records through it. Every call is made with s.mu held.

// world is the scheduler as package energy sees it; its methods are
// called with s.mu held.
type world struct{ s *Scheduler }

// NodeNames implements energy.World.
func (w world) NodeNames() []string { return slices.Sorted(maps.Keys(w.s.tab.Nodes)) }

// Node implements energy.World.
func (w world) Node(name string) (energy.Node, bool) {
	n := w.s.tab.Nodes[name]
	if n == nil {
		return energy.Node{}, false
	}
	return energy.NodeOf(n), true
}

// Cluster implements energy.World.
func (w world) Cluster() (*model.Cluster, map[string]int) { return w.s.tab.Cluster, w.s.tab.NodeIdx }

// UsedGPUs implements energy.World.
func (w world) UsedGPUs(name string) int { return w.s.tab.UsedGPUs(name) }

// JobsOn implements energy.World.
func (w world) JobsOn(name string) []energy.JobOn {
	var out []energy.JobOn
	for id, j := range w.s.tab.Active {
		if devs := nodes.GPUsOn(&j.Rec, name); len(devs) > 0 {
			out = append(out, energy.JobOn{ID: id, Model: j.Rec.Model, Devs: devs, LiveGPUs: j.Rec.LiveGPUs(),
				Rate: w.s.jobRate(id)})
		}
	}
	return out
}

// Active implements energy.World.
func (w world) Active() (models, endpoints []string) {
	for _, j := range w.s.tab.Active {
		models, endpoints = append(models, j.Rec.Model), append(endpoints, j.Rec.DataEndpoint)
	}
	return models, endpoints
}

// Charge implements energy.World: the job's record counts the energy,
// written with its progress (flushProgress); a measured share is a point
// of its power series.
func (w world) Charge(id string, joules float64, modelled bool, d time.Duration, at time.Time) {
	j := w.s.tab.Active[id]
	if j == nil {
		return
	}
	if modelled {
		kwh := joules / energy.JoulesPerKWh
		j.Rec.EnergyKWh += kwh
		j.Rec.EnergyModelledKWh += kwh
	} else {
		j.Rec.EnergyKWh += joules / energy.JoulesPerKWh
		w.s.learned.Series.Power(id, joules, d, at)
	}
	w.s.tab.Unsaved[j] = true
}

// Jobs implements energy.World: every job, in order of submission.
func (w world) Jobs() []energy.Job {
	list := jobs.BySeq(w.s.tab.Jobs)
	out := make([]energy.Job, len(list))
	for i, j := range list {
		out[i] = energy.Job{Rec: &j.Rec, State: w.s.tab.ViewState(j), Queue: cmp.Or(j.Rec.Queue, w.s.defaultQueue())}
		if j.Rec.State == api.Running {
			out[i].GPUType = nodes.JobGPUType(&j.Rec, w.s.tab.Nodes)
		}
	}
	return out
}

// GPUType implements energy.World.
func (w world) GPUType(typ string) model.GPUType { return nodes.ReadyGPUType(typ, w.s.tab.Nodes) }

// Energy returns live energy (package energy's Room: the report, the
// replay's inputs, the calibration, the power samples).
func (s *Scheduler) Energy() *energy.Room { return s.room }
