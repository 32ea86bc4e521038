package leader

import (
	"context"
	"time"

	"github.com/gpusched/gpusched/service/store"
)

// candidate is one entry of the election: a campaigning server's key.
type candidate struct {
	url       string
	createRev int64
	modRev    int64
}

// observe keeps Leader current until ctx ends: it lists the election's
// keys, then watches them; the leader is the entry with the lowest create
// revision (concurrency.Election's rule). While etcd cannot be read (no
// quorum) the leader is unknown.
func (e *Elector) observe(ctx context.Context) {
	prefix := e.cfg.Name + "/"
	for ctx.Err() == nil {
		kvs, rev, err := e.cfg.Store.List(ctx, prefix)
		if err != nil {
			e.unknown()
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		cands := map[string]candidate{}
		for _, kv := range kvs {
			cands[kv.Key] = candidate{url: string(kv.Value), createRev: kv.CreateRev, modRev: kv.ModRev}
		}
		e.publish(cands)
		ch, err := e.cfg.Store.Watch(ctx, prefix, rev)
		if err != nil {
			e.unknown()
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		for ev := range ch {
			if ev.Type == store.EventDelete {
				delete(cands, ev.KV.Key)
			} else {
				cands[ev.KV.Key] = candidate{url: string(ev.KV.Value), createRev: ev.KV.CreateRev, modRev: ev.KV.ModRev}
			}
			e.publish(cands)
		}
		// The watch ended (etcd lost its leader, a compaction, ctx): list
		// again.
		e.unknown()
	}
}

// publish sets the leader to the candidate with the lowest create
// revision.
func (e *Elector) publish(cands map[string]candidate) {
	var best *candidate
	for _, c := range cands {
		if best == nil || c.createRev < best.createRev {
			c := c
			best = &c
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if best == nil {
		e.refresh("", 0)
		return
	}
	e.refresh(best.url, best.modRev)
}

// unknown forgets the leader.
func (e *Elector) unknown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refresh("", 0)
}
