package scheduler

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/nodes"
)

// load reads every node and job from the store. Nodes that were not down
// become pending: they count as ready (their running jobs keep their GPUs)
// until they register again or the heartbeat timeout passes.
func (s *Scheduler) load(ctx context.Context) error {
	if err := s.loadNodes(ctx); err != nil {
		return err
	}
	kvs, _, err := s.store.List(ctx, ledger.JobPrefix)
	if err != nil {
		return fmt.Errorf("server: load jobs: %w", err)
	}
	var maxSeq int
	for _, kv := range kvs {
		var rec record
		if err := json.Unmarshal(kv.Value, &rec); err != nil {
			return fmt.Errorf("server: load %s: %w", kv.Key, err)
		}
		seq, ok := api.ParseJobID(rec.ID)
		if !ok || ledger.JobKey(rec.ID) != kv.Key {
			return fmt.Errorf("server: load %s: bad job id %q", kv.Key, rec.ID)
		}
		maxSeq = max(maxSeq, seq)
		s.addJob(&job{Rec: rec, Seq: seq})
	}
	floor, err := ledger.ReadSeqFloor(ctx, s.store)
	if err != nil {
		return err
	}
	s.prunedSeq = floor
	s.nextSeq.Store(int64(max(maxSeq, floor)))
	s.dirty = true
	return s.restoreWork()
}

// loadNodes reads the node records.
func (s *Scheduler) loadNodes(ctx context.Context) error {
	kvs, _, err := s.store.List(ctx, ledger.NodePrefix)
	if err != nil {
		return fmt.Errorf("server: load nodes: %w", err)
	}
	for _, kv := range kvs {
		var r nodeRecord
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return fmt.Errorf("server: load %s: %w", kv.Key, err)
		}
		if len(r.GPUs) == 0 || ledger.NodePrefix+r.Name != kv.Key {
			return fmt.Errorf("server: load %s: bad node record", kv.Key)
		}
		capa, err := api.ParseResources("capacity", r.Capacity)
		if err != nil {
			return fmt.Errorf("server: load %s: %w", kv.Key, err)
		}
		n := s.addNode(nodes.New(r.Name, r.Addr, r.GPUs, capa))
		n.Ready, n.Pending, n.LastSeen = !r.Down, !r.Down, s.started
	}
	return nil
}

// addJob adds a job to memory (and its model job when it is active).
func (s *Scheduler) addJob(j *job) {
	s.tab.Jobs[j.Rec.ID] = j
	if !j.Rec.State.Final() {
		j.Model = s.modelJob(&j.Rec, j.Seq)
		j.ProgressSaved = s.started
		if t := j.Rec.StartedAt; t != nil && j.Rec.State == api.Running {
			// The execution history before the restart is not kept: the
			// open period starts now.
			start := model.Time(s.started.UnixMilli())
			j.Model.FirstStart = min(model.Time(t.UnixMilli()), start)
			j.Model.LastStart, j.Model.Mark, j.Model.Resume = start, start, start
		}
		s.tab.Active[j.Rec.ID] = j
	}
}

// restoreWork rebuilds the nodes' work from the running jobs: replicas of
// jobs that run go back into the work; those of stopping jobs are
// awaited as removed; replicas on nodes the store does not know are lost.
func (s *Scheduler) restoreWork() error {
	now := s.now()
	b := s.newBatch()
	for _, j := range s.tab.Active {
		if j.Rec.State != api.Running {
			continue
		}
		if len(j.Rec.Replicas) == 0 {
			s.stopJob(b, j, stopFail, "the stored record of the running job lists no replica", now)
			continue
		}
		for i, rr := range j.Rec.Replicas {
			if n := s.tab.Nodes[rr.Node]; !rr.Done && (n == nil || !n.Ready) {
				s.lose(b, j, i, "it was down when the server restarted", true, now, now)
			}
		}
	}
	s.settle(b, now)
	if err := b.commit(writeCtx()); err != nil {
		return fmt.Errorf("server: load: %w", err)
	}
	b.apply()
	for _, j := range s.tab.Active {
		if j.Rec.State != api.Running {
			continue
		}
		if j.Rec.Stopping != "" {
			s.unassign(j)
			continue
		}
		s.refreshJob(j)
		s.drain(j) // replicas a resize took out and not yet gone
	}
	return nil
}

// rankOf returns the node rank of a replica ID.
func rankOf(id string) int {
	_, _, r, _ := api.ParseReplicaID(id)
	return r
}
