package ledger

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// Reading without leading. A server that does not lead (several servers on
// one etcd store, docs/SERVER.md "Several servers") has no scheduler of its
// own; it answers reads from the records the leader wrote. They are what
// the store holds: a job's plain progress may lag by up to 5 s, a queued
// job's reason is the stored one, a node's heartbeat is unknown.

// ReadJobs returns the jobs in st in one of states (every job when none is
// given), oldest first, without their events.
func ReadJobs(ctx context.Context, st store.Store, states ...api.State) ([]api.Job, error) {
	recs, err := readRecords(ctx, st)
	if err != nil {
		return nil, err
	}
	out := []api.Job{}
	for _, r := range recs {
		if len(states) == 0 || slices.Contains(states, r.State) {
			j := r.Job
			j.Events = nil
			out = append(out, Normal(j))
		}
	}
	return out, nil
}

// ReadRecord returns job id's record as st holds it; false when st has
// none.
func ReadRecord(ctx context.Context, st store.Store, id string) (Record, bool, error) {
	kv, ok, err := st.Get(ctx, JobKey(id))
	if err != nil {
		return Record{}, false, fmt.Errorf("read job %s: %w", id, err)
	}
	if !ok {
		return Record{}, false, nil
	}
	var r Record
	if err := json.Unmarshal(kv.Value, &r); err != nil {
		return Record{}, false, fmt.Errorf("read %s: %w", kv.Key, err)
	}
	return r, true, nil
}

// ReadNodes returns the nodes in st by name, with the GPUs and replicas
// ReadJob returns job id as st holds it, with its events; api.ErrNotFound.
func ReadJob(ctx context.Context, st store.Store, id string) (api.Job, error) {
	r, ok, err := ReadRecord(ctx, st, id)
	if err != nil {
		return api.Job{}, err
	}
	if !ok {
		return api.Job{}, api.NotFound("no job %q", id)
	}
	return Normal(r.Job), nil
}

// of the running jobs' records; their last heartbeat is unknown (zero).
func ReadNodes(ctx context.Context, st store.Store) ([]api.Node, error) {
	kvs, _, err := st.List(ctx, NodePrefix)
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	recs, err := readRecords(ctx, st)
	if err != nil {
		return nil, err
	}
	reqs := make([]model.Resources, len(recs))
	for k, jr := range recs {
		reqs[k], _ = api.ParseResources("requests", jr.Requests) // unreadable: counted as none
	}
	out := []api.Node{}
	for _, kv := range kvs {
		var r Node
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return nil, fmt.Errorf("read %s: %w", kv.Key, err)
		}
		n := api.Node{Name: r.Name, Addr: r.Addr, State: api.NodeReady, GPUs: r.GPUs, Capacity: r.Capacity}
		if r.Down {
			n.State = api.NodeDown
		}
		used := recordUsed(r)
		for k, jr := range recs {
			for _, rr := range jr.Replicas {
				if jr.State == api.Running && rr.Node == r.Name && !rr.Done {
					n.GPUsUsed += len(rr.GPUs)
					n.Replicas = append(n.Replicas, fmt.Sprintf("%s/%d", jr.ID, rankOf(rr.ID)))
					for name, q := range reqs[k] {
						used[name] += int64(len(rr.GPUs)) * q
					}
				}
			}
		}
		n.Used = api.FormatResources(used)
		out = append(out, n)
	}
	return out, nil
}

// recordUsed returns a zero use of every resource node record r declares.
func recordUsed(r Node) model.Resources {
	used := make(model.Resources, len(r.Capacity))
	for name := range r.Capacity {
		used[name] = 0
	}
	return used
}

// readRecords reads every job record, in submission order.
func readRecords(ctx context.Context, st store.Store) ([]Record, error) {
	kvs, _, err := st.List(ctx, JobPrefix)
	if err != nil {
		return nil, fmt.Errorf("read jobs: %w", err)
	}
	out := make([]Record, 0, len(kvs))
	for _, kv := range kvs {
		var r Record
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return nil, fmt.Errorf("read %s: %w", kv.Key, err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Record) int {
		sa, _ := api.ParseJobID(a.ID)
		sb, _ := api.ParseJobID(b.ID)
		return cmp.Compare(sa, sb)
	})
	return out, nil
}

// Normal fills in what a stored job may lack for the API (a nil alloc).
func Normal(j api.Job) api.Job {
	if j.Alloc == nil {
		j.Alloc = []string{}
	}
	return j
}

// rankOf returns the node rank of a replica ID.
func rankOf(id string) int {
	_, _, r, _ := api.ParseReplicaID(id)
	return r
}
