package server

import (
	"context"
	"sync"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// Bounds of the interval between two prunings of the audit log: a tenth
// of the retention, at least a minute and at most an hour.
const (
	minAuditPruneEvery = time.Minute
	maxAuditPruneEvery = time.Hour
)

// runWithRetention runs loop (a scheduling loop) and, beside it when the
// server has an audit retention, the audit log's pruning; it returns
// loop's result once the pruning has stopped too, so that the store is
// not closed under it.
func (s *Server) runWithRetention(ctx context.Context, loop func(context.Context) error) error {
	if s.auditRetention <= 0 {
		return loop(ctx)
	}
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.keepAuditRetention(pctx) })
	err := loop(ctx)
	stop()
	wg.Wait()
	return err
}

// keepAuditRetention prunes the audit log now and then every tenth of the
// retention (within minAuditPruneEvery and maxAuditPruneEvery) until ctx
// ends.
func (s *Server) keepAuditRetention(ctx context.Context) {
	tick := time.NewTicker(auditPruneEvery(s.auditRetention))
	defer tick.Stop()
	for {
		s.pruneAudit(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// auditPruneEvery is the interval between two prunings for a retention.
func auditPruneEvery(retention time.Duration) time.Duration {
	return min(max(retention/10, minAuditPruneEvery), maxAuditPruneEvery)
}

// pruneAudit deletes the audit entries older than the retention and, when
// it deleted some, records that in the audit log itself (who: the server).
// A failure is logged; the next pruning tries again.
func (s *Server) pruneAudit(ctx context.Context) {
	cutoff := s.now().Add(-s.auditRetention).UTC()
	n, err := s.audit.Prune(ctx, cutoff)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("pruning the audit log", "before", cutoff, "pruned", n, "err", err)
		}
		return
	}
	if n == 0 {
		return
	}
	s.log.Info("pruned the audit log", "entries", n, "before", cutoff, "retention", s.auditRetention)
	e := api.AuditEntry{Who: "server", Action: "PRUNE audit log", Target: "before " + cutoff.Format(time.RFC3339), Status: 200}
	if err := s.audit.Record(ctx, e); err != nil && ctx.Err() == nil {
		s.log.Warn("recording the audit log's pruning", "err", err)
	}
}
