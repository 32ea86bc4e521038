package queues

import (
	"maps"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/service/api"
)

// Check resolves and checks the queue of a job spec against the engine's
// queue layer p (nil: the server has no queues) and the queues' file spec:
// a declared queue or the default one; none without queues.
func Check(p *quota.Policy, spec *config.QueuesSpec, js *api.JobSpec) error {
	if p == nil {
		if js.Queue != "" && js.Queue != quota.DefaultQueue {
			return &api.FieldError{Field: "queue", Message: "unknown queue " + js.Queue + ": the server has no queues (docs/QUEUES.md)"}
		}
		return nil
	}
	if js.Queue == "" {
		js.Queue = Default(spec)
		return nil
	}
	for _, q := range p.Queues() {
		if q.Name == js.Queue {
			return nil
		}
	}
	var names []string
	for _, q := range p.Queues() {
		names = append(names, q.Name)
	}
	return &api.FieldError{Field: "queue", Message: "unknown queue " + js.Queue + " (known: " + strings.Join(names, ", ") + ")"}
}

// Default names the queue of jobs that name none.
func Default(spec *config.QueuesSpec) string {
	if spec != nil && spec.DefaultQueue != "" {
		return spec.DefaultQueue
	}
	return quota.DefaultQueue
}

// Name is a queue's name as messages show it ("" is the default queue).
func Name(q string) string {
	if q == "" {
		return quota.DefaultQueue
	}
	return q
}

// View returns every queue of p with what it holds and waits for among
// the active model jobs, its fair-share usage and share (GET /v1/queues);
// an empty list without queues (p nil). fairShare names the usage's
// measure; c is the cluster the jobs run on (nil: none).
func View(p *quota.Policy, spec *config.QueuesSpec, fairShare string, jobs []*model.Job, c *model.Cluster) api.QueueList {
	out := api.QueueList{Queues: []api.QueueStatus{}}
	if p == nil {
		return out
	}
	out.FairShare = fairShare
	qs := p.Queues()
	usage := p.Usage()
	idx := map[string]int{}
	var total float64
	for i, q := range qs {
		idx[q.Name] = i
		st := api.QueueStatus{Name: q.Name, Weight: q.Weight, Quota: q.Quota, Limit: q.Limit, Used: map[string]int{},
			UsageGPUHours: usage[q.Name], Users: spec.QueueUsers(q.Name)}
		out.Queues = append(out.Queues, st)
		total += usage[q.Name] / q.Weight
	}
	for _, mj := range jobs {
		i, ok := idx[p.QueueOf(mj)]
		if !ok {
			continue
		}
		st := &out.Queues[i]
		switch mj.State {
		case model.Running:
			st.RunningJobs++
			if c != nil && len(mj.Alloc) > 0 {
				st.Used[c.Types[c.TypeOf(mj.Alloc[0])].Name] += len(mj.Alloc)
			}
		case model.Waiting:
			st.PendingJobs++
			st.PendingGPUs += mj.Spec.MinGPUs
		}
	}
	for i := range out.Queues {
		st := &out.Queues[i]
		for _, t := range slices.Sorted(maps.Keys(st.Used)) {
			st.Borrowed += max(0, st.Used[t]-st.Quota[t])
		}
		if total > 0 {
			st.Share = st.UsageGPUHours / st.Weight / total
		}
	}
	return out
}
