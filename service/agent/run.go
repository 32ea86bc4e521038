package agent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/shim"
)

// Run takes over the replicas an earlier agent left in the data directory,
// then registers with the server and serves it until ctx ends: it runs the
// work the server assigns, reports, and ships output. While the server
// cannot be reached it retries with exponential backoff (up to 10 s between
// attempts) and keeps its replicas running. When ctx ends, Run returns nil;
// the replicas keep running unless Config.StopOnExit is set. It returns an
// error when the data directory cannot be read or another agent uses it.
// Call Run once.
func (a *Agent) Run(ctx context.Context) error {
	if a.ran.Swap(true) {
		return fmt.Errorf("agent %s: Run called twice", a.cfg.Name)
	}
	release, err := lockDataDir(a.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("agent %s: %w", a.cfg.Name, err)
	}
	defer release()
	if err := a.setupConfinement(); err != nil {
		return fmt.Errorf("agent %s: %w", a.cfg.Name, err)
	}
	if err := a.load(time.Now()); err != nil {
		return fmt.Errorf("agent %s: %w", a.cfg.Name, err)
	}
	var wg sync.WaitGroup
	hk, stopHK := context.WithCancel(context.WithoutCancel(ctx))
	if err := shim.BecomeSubreaper(); err != nil {
		a.log.Warn("cannot become child subreaper; orphans of replicas are left to init", "err", err)
	} else {
		wg.Go(func() { every(hk, a.t.sweepEvery, shim.ReapOrphans) })
	}
	wg.Go(func() { a.powerLoop(hk) })
	wg.Go(func() { a.probeLoop(hk) })
	a.log.Info("agent running", "server", a.cfg.Server, "gpus", len(a.cfg.GPUs), "data", a.cfg.DataDir)
	a.logRunAs()
	wg.Go(func() { a.warnAddr(hk) }) // a look-up must not delay the registration
	a.serve(ctx)
	if a.cfg.StopOnExit {
		a.stopAndReport()
	} else if n := len(a.reps.running()); n > 0 {
		a.log.Info("agent stopping; its replicas keep running", "replicas", n)
	}
	close(a.detach)
	stopHK()
	wg.Wait()
	a.host.Tidy() // what replicas left running still hold stays
	return nil
}

// serve registers and serves sessions until ctx ends, retrying with
// backoff while the server cannot be reached.
func (a *Agent) serve(ctx context.Context) {
	b := backoff{min: a.t.backoffMin, max: a.t.backoffMax}
	failures := 0
	for ctx.Err() == nil {
		hb, err := a.register(ctx)
		if err != nil {
			if failures++; failures == 1 {
				a.log.Warn("cannot register; retrying with backoff", "err", err)
			} else {
				a.log.Debug("cannot register", "attempt", failures, "err", err)
			}
			sleep(ctx, b.next())
			continue
		}
		failures = 0
		healthy, err := a.session(ctx, hb)
		if ctx.Err() != nil {
			break
		}
		a.log.Warn("lost contact with the server; registering again", "err", err)
		if healthy {
			b.reset()
		} else {
			sleep(ctx, b.next())
		}
	}
}

// stopAndReport stops every replica and tries once, briefly, to ship their
// output and report their exits (the next agent does it otherwise).
func (a *Agent) stopAndReport() {
	a.log.Info("stopping all replicas before exiting")
	a.stopAll()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	a.shipLogs(ctx)
	if _, err := a.api.status(ctx, api.Status{Replicas: a.reps.statuses()}); err != nil {
		a.log.Warn("final report failed; the exits will be reported by the next agent", "err", err)
	}
}

// register registers the node with the replicas it knows and returns the
// heartbeat period the server asks for (default 1 s).
func (a *Agent) register(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, a.t.callTimeout)
	defer cancel()
	reply, err := a.registerAuth(ctx, api.Register{
		Name: a.cfg.Name, Addr: a.cfg.Addr, GPUs: a.cfg.GPUs, Replicas: a.reps.statuses(),
		Capacity: api.FormatResources(a.cfg.Capacity),
	})
	if err != nil {
		return 0, err
	}
	hb := time.Duration(reply.HeartbeatS * float64(time.Second))
	if hb <= 0 {
		hb = time.Second
	}
	a.epoch.Add(1)
	a.reps.resyncLogs()
	a.log.Info("registered", "server", a.cfg.Server, "heartbeat", hb)
	return max(hb, 10*time.Millisecond), nil
}

// session serves one registration until ctx ends or the server is lost. It
// reports whether the server answered a work poll (the contact was
// healthy) and why it ended.
func (a *Agent) session(ctx context.Context, hb time.Duration) (bool, error) {
	ctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	var (
		wg      sync.WaitGroup
		healthy atomic.Bool
		applied atomic.Int64 // 0: no work of this registration applied yet
	)
	wg.Go(func() { a.pollLoop(ctx, end, &healthy, &applied) })
	wg.Go(func() { a.statusLoop(ctx, end, hb, &applied) })
	wg.Go(func() { every(ctx, a.t.logEvery, func() { a.shipLogs(ctx) }) })
	<-ctx.Done()
	wg.Wait()
	return healthy.Load(), context.Cause(ctx)
}

// pollLoop long-polls the node's work, reconciles with every answer and
// records its version as applied. It ends the session when a poll fails.
func (a *Agent) pollLoop(ctx context.Context, end context.CancelCauseFunc, healthy *atomic.Bool, applied *atomic.Int64) {
	after := int64(0) // a new registration: the server may have restarted
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, a.t.pollTimeout)
		w, err := a.api.work(pctx, after)
		ownTimeout := pctx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case err == nil:
			healthy.Store(true)
			after = w.Version
			a.probes.set(w.Probes)
			a.reconcile(w)
			applied.Store(w.Version)
		case ctx.Err() != nil || ownTimeout:
		case httpCode(err) == 404:
			end(fmt.Errorf("%w: %v", errUnknownNode, err))
		default:
			end(err)
		}
	}
}

// statusLoop reports every heartbeat and whenever a replica starts or
// exits, with the version of the newest work applied. It ends the session
// when a report fails.
func (a *Agent) statusLoop(ctx context.Context, end context.CancelCauseFunc, hb time.Duration, applied *atomic.Int64) {
	tick := time.NewTicker(hb)
	defer tick.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, a.t.callTimeout)
		probes, upTo := a.probes.take()
		w, err := a.api.status(cctx, api.Status{Replicas: a.reps.statuses(), Version: applied.Load(), Power: a.powerReading(),
			Probes: probes})
		cancel()
		switch {
		case err == nil:
			// The answer's acknowledgements are safe to apply whatever its
			// version, and so are the endpoints to probe; its replicas wait
			// for the work loop.
			a.saveAll(a.reps.ack(w.Acked))
			a.probes.done(upTo)
			a.probes.set(w.Probes)
		case ctx.Err() != nil:
		case httpCode(err) == 404:
			end(fmt.Errorf("%w: %v", errUnknownNode, err))
		default:
			end(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.kick:
		}
	}
}

// reconcile applies one Work: forgets acknowledged replicas, stops the
// ones no longer listed, starts the new ones and updates the running ones
// whose entry changed (a resize: host and environment files, SIGUSR1 to
// node rank 0; never a restart).
func (a *Agent) reconcile(w api.Work) {
	pl := a.reps.reconcile(w, a.dirOf)
	a.saveAll(pl.acked)
	for _, c := range pl.changed {
		a.applyChange(c)
	}
	a.startAll(pl.start)
	if len(pl.acked)+len(pl.stop) > 0 {
		a.report()
	}
}

// every calls f every period until ctx ends.
func every(ctx context.Context, period time.Duration, f func()) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f()
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// backoff is an exponential backoff with jitter.
type backoff struct {
	min, max, cur time.Duration
}

// next returns the next delay: min, then doubling up to max, each reduced
// by a random fraction of up to a quarter so that agents spread out.
func (b *backoff) next() time.Duration {
	b.cur = min(max(2*b.cur, b.min), b.max)
	return b.cur - time.Duration(rand.Int64N(int64(b.cur)/4+1))
}

// reset starts over at min.
func (b *backoff) reset() { b.cur = 0 }
