package scheduler

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/nodes"
)

// rebuild makes a new cluster and state from the ready nodes (model.Cluster
// is immutable) and puts every active job back: running jobs on their
// GPUs, the others in the queue. A merged throughput matrix waiting from
// the online profiles is installed first (swapMatrix).
func (s *Scheduler) rebuild() {
	s.dirty = false
	s.swapMatrix()
	c, idx := s.newCluster()
	if c == nil {
		s.tab.Cluster, s.tab.State, s.tab.NodeIdx = nil, nil, nil
		return
	}
	table, err := profile.NewTable(s.matrix, c, s.ref)
	if err != nil {
		s.log.Error("cannot build the profile table", "err", err)
		s.tab.Cluster, s.tab.State, s.tab.NodeIdx = nil, nil, nil
		return
	}
	st := model.NewState(c, table)
	jobs := make([]*job, 0, len(s.tab.Active))
	for _, j := range s.tab.Active {
		jobs = append(jobs, j)
	}
	slices.SortFunc(jobs, func(a, b *job) int {
		return cmp.Or(cmp.Compare(a.Model.Spec.Submit, b.Model.Spec.Submit), cmp.Compare(a.Seq, b.Seq))
	})
	load := make([]model.Holding, 0, len(jobs))
	for _, j := range jobs {
		h := model.Holding{Job: j.Model}
		if j.Rec.State == api.Running {
			// Restored, not started: what the job holds of the nodes'
			// other resources is charged even where a node came back
			// smaller.
			if h.GPUs = nodes.ModelAlloc(&j.Rec, s.tab.Nodes, c, idx); len(h.GPUs) == 0 {
				s.log.Error("running job has no GPU on a ready node", "job", j.Rec.ID)
				continue
			}
		}
		load = append(load, h)
	}
	for _, err := range st.Load(load) {
		s.log.Error("running job's GPUs are not free", "err", err)
	}
	s.tab.Cluster, s.tab.State, s.tab.NodeIdx = c, st, idx
}

// newCluster returns the cluster of the ready nodes (sorted by name) and
// their indices; nil when there is none. It models every resource that a
// node declares or an active job asks for.
func (s *Scheduler) newCluster() (*model.Cluster, map[string]int) {
	return s.clusterOf(nodes.Ready(s.tab.Nodes), s.requested())
}

// clusterOf returns the cluster of nodes (sorted by name here) and their
// indices, modelling every resource that a node declares or that is in
// requested (nodes.Cluster); nil when there is no node.
func (s *Scheduler) clusterOf(ready []*node, requested map[string]bool) (*model.Cluster, map[string]int) {
	c, idx, err := nodes.Cluster(ready, requested)
	if err != nil {
		s.log.Error("cannot build the cluster", "err", err)
	}
	return c, idx
}

// requested returns the names of the resources that active jobs ask for.
func (s *Scheduler) requested() map[string]bool {
	names := map[string]bool{}
	for _, j := range s.tab.Active {
		if j.Model == nil {
			continue
		}
		for name := range j.Model.Spec.Requests {
			names[name] = true
		}
	}
	return names
}

// modelJob returns the model job of a record. The service knows no
// durations or steps: a job's speed comes from the throughput matrix when
// its model is there, else it is proportional to its GPUs (profile.Table's
// rated-performance fallback).
func (s *Scheduler) modelJob(rec *record, seq int) *model.Job {
	spec := model.JobSpec{ID: rec.ID, Submit: model.Time(rec.SubmittedAt.UnixMilli()),
		GPUs: rec.GPUsRequested, MinGPUs: rec.MinGPUs, MaxGPUs: rec.MaxGPUs, Model: rec.Model,
		GPUType: rec.GPUType, Priority: rec.Priority, User: rec.User, Queue: rec.Queue, PeakMemMiB: s.matrix.PeakMemMiB(rec.Model),
		Upload: s.energy.DeviceName(rec.DataEndpoint), Requests: s.recordRequests(rec)}
	mi, ok := s.models[rec.Model]
	if !ok {
		mi = -1
	}
	mj := model.NewJob(spec, seq, mi, 0)
	if t := rec.LastCheckpointAt; t != nil {
		mj.Checkpoint = model.Time(t.UnixMilli())
	}
	return mj
}

// recordRequests returns what each GPU of a job asks besides the GPU, from
// its record; a record that cannot be read (never written so) asks for
// nothing, and the error is logged.
func (s *Scheduler) recordRequests(rec *record) model.Resources {
	r, err := api.ParseResources("requests", rec.Requests)
	if err != nil {
		s.log.Error("job's stored requests are unreadable: scheduled without them", "job", rec.ID, "err", err)
		return nil
	}
	return r
}

// replicaLimits are what a replica of rec holding gpus GPUs may use of its
// node (api.Replica.Limits): its GPUs' CPU and memory requests summed;
// nil when the job asks for neither.
func (s *Scheduler) replicaLimits(rec *record, gpus int) map[string]string {
	reqs := s.recordRequests(rec)
	var out model.Resources
	for _, name := range []string{model.ResourceCPU, model.ResourceMemory} {
		if v := reqs[name]; v > 0 {
			if out == nil {
				out = model.Resources{}
			}
			out[name] = v * int64(gpus)
		}
	}
	return api.FormatResources(out)
}
