package energy

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/jobs"
	"github.com/gpusched/gpusched/service/nodes"
)

// Table is the service's World: the scheduler's job table (package jobs),
// read and charged with the scheduler's lock held. The Kubernetes shell
// implements World over its own state.
type Table struct {
	T *jobs.Table
	// Rate returns the latest measured steps/s of running job id (0: none
	// known).
	Rate func(id string) float64
	// Power adds a job's measured share, joules over the d before at, to
	// its power series.
	Power func(id string, joules float64, d time.Duration, at time.Time)
	// Queue names the queue of jobs that name none.
	Queue string
}

// NodeNames implements World.
func (w Table) NodeNames() []string { return slices.Sorted(maps.Keys(w.T.Nodes)) }

// Node implements World.
func (w Table) Node(name string) (Node, bool) {
	n := w.T.Nodes[name]
	if n == nil {
		return Node{}, false
	}
	return NodeOf(n), true
}

// Cluster implements World.
func (w Table) Cluster() (*model.Cluster, map[string]int) { return w.T.Cluster, w.T.NodeIdx }

// UsedGPUs implements World.
func (w Table) UsedGPUs(name string) int { return w.T.UsedGPUs(name) }

// JobsOn implements World.
func (w Table) JobsOn(name string) []JobOn {
	var out []JobOn
	for id, j := range w.T.Active {
		if devs := nodes.GPUsOn(&j.Rec, name); len(devs) > 0 {
			out = append(out, JobOn{ID: id, Model: j.Rec.Model, Devs: devs, LiveGPUs: j.Rec.LiveGPUs(), Rate: w.Rate(id)})
		}
	}
	return out
}

// Active implements World.
func (w Table) Active() (models, endpoints []string) {
	for _, j := range w.T.Active {
		models, endpoints = append(models, j.Rec.Model), append(endpoints, j.Rec.DataEndpoint)
	}
	return models, endpoints
}

// Charge implements World: the job's record counts the energy, written
// with its progress (the job joins Table.Unsaved); a measured share is a
// point of its power series.
func (w Table) Charge(id string, joules float64, modelled bool, d time.Duration, at time.Time) {
	j := w.T.Active[id]
	if j == nil {
		return
	}
	if modelled {
		kwh := joules / JoulesPerKWh
		j.Rec.EnergyKWh += kwh
		j.Rec.EnergyModelledKWh += kwh
	} else {
		j.Rec.EnergyKWh += joules / JoulesPerKWh
		w.Power(id, joules, d, at)
	}
	w.T.Unsaved[j] = true
}

// Jobs implements World: every job, in order of submission.
func (w Table) Jobs() []Job {
	list := jobs.BySeq(w.T.Jobs)
	out := make([]Job, len(list))
	for i, j := range list {
		out[i] = Job{Rec: &j.Rec, State: w.T.ViewState(j), Queue: cmp.Or(j.Rec.Queue, w.Queue)}
		if j.Rec.State == api.Running {
			out[i].GPUType = nodes.JobGPUType(&j.Rec, w.T.Nodes)
		}
	}
	return out
}

// GPUType implements World.
func (w Table) GPUType(typ string) model.GPUType { return nodes.ReadyGPUType(typ, w.T.Nodes) }
