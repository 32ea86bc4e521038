package agent

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/machine"
)

// RTT probes (docs/AGENT.md, "RTT probes"; seed 002, step 2: every compute
// device pings the storage device of a task's data): the server names the
// data endpoints in its work (api.Work.Probes); the agent measures its
// round-trip time to each, every Config.ProbeEvery with ±20 % jitter, and
// sends the results with its next status report.
const (
	// DefaultProbeEvery is the probe period unless Config.ProbeEvery says
	// otherwise.
	DefaultProbeEvery = 30 * time.Second
	// DefaultProbeTimeout bounds one probe unless Config.ProbeTimeout says
	// otherwise.
	DefaultProbeTimeout = 2 * time.Second
	// probeJitter is the share of the period by which a probe's time is
	// moved at random, so that agents do not probe in step.
	probeJitter = 0.2
	// maxPendingProbes bounds the results kept for the next report while
	// the server cannot be reached (the oldest go first).
	maxPendingProbes = 1024
)

// probeState holds the endpoints to probe and the results not yet
// reported.
type probeState struct {
	mu      sync.Mutex
	targets []string
	changed chan struct{} // closed and replaced when targets change
	pending []api.ProbeResult
	// seq numbers the results: pending[k] is result first+k.
	first, next int64
}

func newProbeState() *probeState { return &probeState{changed: make(chan struct{})} }

// set replaces the endpoints to probe (from the server's work).
func (p *probeState) set(targets []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if slices.Equal(p.targets, targets) {
		return
	}
	p.targets = slices.Clone(targets)
	close(p.changed)
	p.changed = make(chan struct{})
}

// snapshot returns the endpoints and the channel that signals their next
// change.
func (p *probeState) snapshot() ([]string, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.targets), p.changed
}

// add keeps a result for the next report; beyond maxPendingProbes the
// oldest is dropped.
func (p *probeState) add(r api.ProbeResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = append(p.pending, r)
	p.next++
	if over := len(p.pending) - maxPendingProbes; over > 0 {
		p.pending = slices.Delete(p.pending, 0, over)
		p.first += int64(over)
	}
}

// take returns the results not yet reported and the number just past the
// last of them, for done.
func (p *probeState) take() ([]api.ProbeResult, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.pending), p.next
}

// done forgets the results numbered below upTo (a report carried them).
func (p *probeState) done(upTo int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k := upTo - p.first; k > 0 {
		k = min(k, int64(len(p.pending)))
		p.pending = slices.Delete(p.pending, 0, int(k))
		p.first += k
	}
}

// probeLoop probes every endpoint the server names until ctx ends: a new
// endpoint at once, then every ProbeEvery ± 20 %.
func (a *Agent) probeLoop(ctx context.Context) {
	due := map[string]time.Time{}
	for ctx.Err() == nil {
		targets, changed := a.probes.snapshot()
		now := time.Now()
		next := now.Add(time.Hour)
		for ep := range due {
			if !slices.Contains(targets, ep) {
				delete(due, ep)
			}
		}
		for _, ep := range targets {
			t, ok := due[ep]
			if !ok || !now.Before(t) {
				a.probes.add(a.probe(ctx, ep))
				a.report()
				t = time.Now().Add(jittered(a.cfg.ProbeEvery))
				due[ep] = t
			}
			if t.Before(next) {
				next = t
			}
		}
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// jittered returns d moved by up to ±probeJitter of itself, at random.
func jittered(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (1 + probeJitter*(2*rand.Float64()-1)))
}

// probe measures the round-trip time to one endpoint.
func (a *Agent) probe(ctx context.Context, ep string) api.ProbeResult {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ProbeTimeout)
	defer cancel()
	r := api.ProbeResult{Endpoint: ep, At: time.Now().UTC()}
	rtt, err := machine.Probe(ctx, ep)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.RTTMs = float64(rtt) / float64(time.Millisecond)
	return r
}
