package scheduler

import (
	"strings"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/service/api"
)

// checkFits refuses, as an *api.FieldError naming the resource's field, a
// job whose GPUs ask for more of a resource besides GPUs than any
// registered node (ready or down: it may come back) of a GPU type the job
// may use has — a job no registered node could ever hold. The message is
// the core's (engine.Unfit): the resource, what one GPU's share asks and
// the largest node. A job that asks for nothing besides GPUs, one
// submitted before any node registered and one whose GPU type no node has
// are accepted, like a job that asks more GPUs than the cluster has: a
// node that holds it may register.
func (s *Scheduler) checkFits(spec *api.JobSpec, reqs model.Resources) error {
	if len(reqs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]*node, 0, len(s.tab.Nodes))
	for _, n := range s.tab.Nodes {
		all = append(all, n)
	}
	requested := map[string]bool{}
	for name := range reqs {
		requested[name] = true
	}
	c, _ := s.clusterOf(all, requested)
	if c == nil {
		return nil
	}
	mj := model.NewJob(model.JobSpec{ID: "new", GPUs: spec.GPUs, MinGPUs: spec.Min(), MaxGPUs: spec.Max(),
		GPUType: strings.ToLower(spec.GPUType), Requests: reqs}, 0, -1, 0)
	req, first, typed := c.Request(&mj.Spec), -1, false
	for t, gt := range c.Types {
		if mj.Spec.GPUType != "" && gt.Name != mj.Spec.GPUType {
			continue
		}
		typed = true
		if c.Holds(t, req, mj.Spec.ReplicaGPUs) >= 1 {
			return nil
		}
		if first < 0 {
			first = t
		}
	}
	if !typed {
		return nil
	}
	return s.unfit(c, mj, req, first)
}

// unfit is the error of a job that no node of its GPU types can hold, t
// the first of them.
func (s *Scheduler) unfit(c *model.Cluster, mj *model.Job, req model.Vec, t int) error {
	table, err := profile.NewTable(s.matrix, c, s.ref)
	if err != nil {
		s.log.Error("cannot build the profile table", "err", err)
		return nil
	}
	why := engine.Unfit(model.NewState(c, table), mj, 1)
	if _, detail, ok := strings.Cut(why, ": "); ok {
		why = detail
	}
	field := "resources"
	if r := c.Scarcest(t, req, mj.Spec.ReplicaGPUs); r >= 0 {
		field = api.ResourceField(c.Resources()[r])
	}
	return &api.FieldError{Field: field, Message: "no registered node can ever hold it: " + why}
}
