package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// Bounds of the interval between two prunings: a tenth of the shortest
// retention, at least a minute and at most an hour.
const (
	minPruneEvery = time.Minute
	maxPruneEvery = time.Hour
)

// runWithRetention runs loop (a scheduling loop) and, beside it when the
// server has a retention for audit entries or ended jobs, their pruning;
// it returns loop's result once the pruning has stopped too, so that the
// store is not closed under it.
func (s *Server) runWithRetention(ctx context.Context, loop func(context.Context) error) error {
	if s.auditRetention <= 0 && s.jobRetention <= 0 {
		return loop(ctx)
	}
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.keepRetention(pctx) })
	err := loop(ctx)
	stop()
	wg.Wait()
	return err
}

// keepRetention prunes now and then every pruneEvery until ctx ends.
func (s *Server) keepRetention(ctx context.Context) {
	tick := time.NewTicker(pruneEvery(s.auditRetention, s.jobRetention))
	defer tick.Stop()
	for {
		if s.jobRetention > 0 {
			s.pruneJobs(ctx)
		}
		if s.auditRetention > 0 {
			s.pruneAudit(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// pruneEvery is the interval between two prunings for the retentions
// given (0: none): a tenth of the shortest, within minPruneEvery and
// maxPruneEvery.
func pruneEvery(retentions ...time.Duration) time.Duration {
	every := maxPruneEvery
	for _, r := range retentions {
		if r > 0 {
			every = min(every, r/10)
		}
	}
	return max(every, minPruneEvery)
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
	if n > 0 {
		s.log.Info("pruned the audit log", "entries", n, "before", cutoff, "retention", s.auditRetention)
		s.recordPrune(ctx, "PRUNE audit log", "before "+cutoff.Format(time.RFC3339))
	}
}

// pruneJobs deletes the jobs that ended before the job retention, and
// their EDL state, and records it in the audit log when it deleted some.
// A failure is logged; the next pruning tries again.
func (s *Server) pruneJobs(ctx context.Context) {
	cutoff := s.now().Add(-s.jobRetention).UTC()
	ids, err := s.sched.PruneJobs(ctx, cutoff)
	if len(ids) > 0 {
		if derr := s.edl.Drop(ctx, ids); derr != nil && ctx.Err() == nil {
			s.log.Warn("dropping pruned jobs' EDL state", "err", derr)
		}
		s.log.Info("pruned ended jobs", "jobs", len(ids), "first", ids[0], "last", ids[len(ids)-1], "ended_before", cutoff)
		span := ids[0]
		if len(ids) > 1 {
			span += " … " + ids[len(ids)-1]
		}
		s.recordPrune(ctx, "PRUNE jobs", fmt.Sprintf("%d ended before %s (%s)", len(ids), cutoff.Format(time.RFC3339), span))
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn("pruning ended jobs", "before", cutoff, "pruned", len(ids), "err", err)
	}
}

// recordPrune records a pruning in the audit log (who: the server).
func (s *Server) recordPrune(ctx context.Context, action, target string) {
	e := api.AuditEntry{Who: "server", Action: action, Target: target, Status: 200}
	if err := s.audit.Record(ctx, e); err != nil && ctx.Err() == nil {
		s.log.Warn("recording a pruning in the audit log", "action", action, "err", err)
	}
}
