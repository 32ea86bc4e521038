package scheduler

import (
	"context"
	"fmt"

	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/store"
)

// batch collects changes to job records made under s.mu: the new records
// are written in one store transaction, and only when it succeeds do they
// replace the records in memory and do their in-memory effects (work lists,
// the model) run. Nothing reaches an agent or a client before the commit.
type batch struct {
	s      *Scheduler
	order  []*job
	recs   map[*job]*record
	afters []func()
	nodes  []nodeRecord
	// ports are the MASTER_PORTs in use by master node, built on the
	// batch's first start (Scheduler.port).
	ports map[string]map[int]bool
}

// newBatch starts a batch of record edits. The modelled energy of the
// nodes without readings is accounted up to now first, into the jobs'
// records, so that a job the batch ends keeps its share (a batch edits
// copies of the records).
func (s *Scheduler) newBatch() *batch {
	s.energy.AccountModelled(s.world, s.now())
	return &batch{s: s, recs: map[*job]*record{}}
}

// edit returns the pending record of j, a copy made on first use.
func (b *batch) edit(j *job) *record {
	if r, ok := b.recs[j]; ok {
		return r
	}
	r := j.Rec.Clone()
	b.recs[j] = &r
	b.order = append(b.order, j)
	return &r
}

// touched reports whether j has a pending record.
func (b *batch) touched(j *job) bool { _, ok := b.recs[j]; return ok }

// then registers an in-memory effect to run after the commit, in order.
func (b *batch) then(f func()) { b.afters = append(b.afters, f) }

// putNode adds a node record to the transaction.
func (b *batch) putNode(r nodeRecord) { b.nodes = append(b.nodes, r) }

// empty reports whether the batch writes nothing.
func (b *batch) empty() bool { return len(b.order) == 0 && len(b.nodes) == 0 }

// commit writes the batch durably; on error nothing in memory changes.
func (b *batch) commit(ctx context.Context) error {
	if b.empty() {
		return nil
	}
	ops := make([]store.Op, 0, len(b.order)+len(b.nodes))
	for _, j := range b.order {
		data, err := ledger.MarshalRecord(b.recs[j])
		if err != nil {
			return err
		}
		ops = append(ops, store.OpPut(ledger.JobKey(j.Rec.ID), data))
	}
	for _, n := range b.nodes {
		data, err := ledger.MarshalNode(n)
		if err != nil {
			return err
		}
		ops = append(ops, store.OpPut(ledger.NodePrefix+n.Name, data))
	}
	if _, err := b.s.store.Txn(ctx, ops...); err != nil {
		return fmt.Errorf("store %d job and %d node records: %w", len(b.order), len(b.nodes), err)
	}
	return nil
}

// apply installs the new records and runs the effects.
func (b *batch) apply() {
	for _, j := range b.order {
		j.Rec = *b.recs[j]
	}
	for _, f := range b.afters {
		f()
	}
	if len(b.order) > 0 {
		b.s.logSignal.Fire()
	}
}

// run commits and applies the batch; on error it logs and reports it.
func (b *batch) run(what string) error {
	if err := b.commit(writeCtx()); err != nil {
		b.s.log.Error("durable write failed; change not applied", "what", what, "err", err)
		return err
	}
	b.apply()
	return nil
}
