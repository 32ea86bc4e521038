package scheduler

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/quota"
	"github.com/gpusched/gpusched/service/api"
)

// configQueue is one queue of the configuration.
type configQueue = config.QueueSpec

// checkQueue resolves and checks the queue of a spec: a declared queue or
// the default one; none without queues.
func (s *Scheduler) checkQueue(spec *api.JobSpec) error {
	if s.quota == nil {
		if spec.Queue != "" && spec.Queue != quota.DefaultQueue {
			return &api.FieldError{Field: "queue", Message: "unknown queue " + spec.Queue + ": the server has no queues (docs/QUEUES.md)"}
		}
		return nil
	}
	if spec.Queue == "" {
		spec.Queue = s.defaultQueue()
		return nil
	}
	for _, q := range s.quota.Queues() {
		if q.Name == spec.Queue {
			return nil
		}
	}
	var names []string
	for _, q := range s.quota.Queues() {
		names = append(names, q.Name)
	}
	return &api.FieldError{Field: "queue", Message: "unknown queue " + spec.Queue + " (known: " + strings.Join(names, ", ") + ")"}
}

// defaultQueue names the queue of jobs that name none.
func (s *Scheduler) defaultQueue() string {
	if s.cfg.Queues != nil && s.cfg.Queues.DefaultQueue != "" {
		return s.cfg.Queues.DefaultQueue
	}
	return quota.DefaultQueue
}

// QueueSpec returns the teams' queues the scheduler was configured with
// (nil: none).
func (s *Scheduler) QueueSpec() *config.QueuesSpec { return s.cfg.Queues }

// queueName is a queue's name as messages show it ("" is the default
// queue).
func queueName(q string) string {
	if q == "" {
		return quota.DefaultQueue
	}
	return q
}

// Queues returns every queue with what it holds and waits for, its
// fair-share usage and share (GET /v1/queues); an empty list without
// queues.
func (s *Scheduler) Queues() api.QueueList {
	out := api.QueueList{Queues: []api.QueueStatus{}}
	if s.quota == nil {
		return out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out.FairShare = s.cfg.Options.Queues.Usage.String()
	qs := s.quota.Queues()
	usage := s.quota.Usage()
	idx := map[string]int{}
	var total float64
	for i, q := range qs {
		idx[q.Name] = i
		st := api.QueueStatus{Name: q.Name, Weight: q.Weight, Quota: q.Quota, Limit: q.Limit, Used: map[string]int{},
			UsageGPUHours: usage[q.Name], Users: s.cfg.Queues.QueueUsers(q.Name)}
		out.Queues = append(out.Queues, st)
		total += usage[q.Name] / q.Weight
	}
	for _, j := range s.active {
		i, ok := idx[s.quota.QueueOf(j.mj)]
		if !ok {
			continue
		}
		st := &out.Queues[i]
		switch j.mj.State {
		case model.Running:
			st.RunningJobs++
			if s.cluster != nil && len(j.mj.Alloc) > 0 {
				st.Used[s.cluster.Types[s.cluster.TypeOf(j.mj.Alloc[0])].Name] += len(j.mj.Alloc)
			}
		case model.Waiting:
			st.PendingJobs++
			st.PendingGPUs += j.mj.Spec.MinGPUs
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

// usageKey holds the queues' fair-share usage in the store (normalised
// GPU-hours by queue name), so that a restarted server remembers it.
const usageKey = "queues/usage"

// usageEvery is how often the queues' usage is written.
const usageEvery = 30 * time.Second

// loadUsage restores the queues' usage from the store.
func (s *Scheduler) loadUsage(ctx context.Context) error {
	if s.quota == nil {
		return nil
	}
	kv, ok, err := s.store.Get(ctx, usageKey)
	if err != nil || !ok {
		return err
	}
	var u map[string]float64
	if err := json.Unmarshal(kv.Value, &u); err != nil {
		s.log.Warn("ignoring the stored queue usage", "err", err)
		return nil
	}
	s.quota.Restore(u)
	return nil
}

// saveUsage writes the queues' usage at most every usageEvery (always
// with force), when there are queues.
func (s *Scheduler) saveUsage(force bool) {
	if s.quota == nil {
		return
	}
	s.mu.Lock()
	now := s.now()
	if !force && now.Sub(s.usageSaved) < usageEvery {
		s.mu.Unlock()
		return
	}
	s.usageSaved = now
	data, err := json.Marshal(s.quota.Usage())
	s.mu.Unlock()
	if err == nil {
		_, err = s.store.Put(writeCtx(), usageKey, data)
	}
	if err != nil {
		s.log.Warn("cannot store the queue usage", "err", err)
	}
}
