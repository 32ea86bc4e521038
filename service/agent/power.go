package agent

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/machine"
)

// Power readings (docs/AGENT.md, "Power readings"): the agent reads its
// node's power every powerEvery through its PowerSamplers and sends the
// latest reading with every status report; the server shows it in
// /metrics, attributes the energy to the jobs and keeps samples for
// gpusched calibrate.
const (
	// DefaultPowerEvery is how often the samplers are read unless
	// Config.PowerEvery says otherwise.
	DefaultPowerEvery = 2 * time.Second
)

// powerState is the agent's latest reading and its samplers' health.
type powerState struct {
	latest  atomic.Pointer[api.PowerReading]
	failing []bool // per sampler: its last reading failed (logged once)
}

// powerLoop reads the samplers every Config.PowerEvery until ctx ends, then
// closes those that are io.Closers. Without samplers it returns at once.
func (a *Agent) powerLoop(ctx context.Context) {
	if len(a.cfg.PowerSamplers) == 0 {
		return
	}
	defer func() {
		for _, p := range a.cfg.PowerSamplers {
			if c, ok := p.(io.Closer); ok {
				_ = c.Close()
			}
		}
	}()
	a.samplePower(ctx, time.Now())
	every(ctx, a.cfg.PowerEvery, func() { a.samplePower(ctx, time.Now()) })
}

// samplePower reads every sampler and keeps the reading for the next
// status report — at once when the load differs from the previous
// reading's, so that the server gets a sample at every load the node
// passes through; a sampler's failure is logged when it begins and when it
// ends, not at every reading.
func (a *Agent) samplePower(ctx context.Context, now time.Time) {
	ps := &a.power
	if ps.failing == nil {
		ps.failing = make([]bool, len(a.cfg.PowerSamplers))
	}
	r := api.PowerReading{At: now.UTC(), Load: a.busyShare()}
	got := false
	for i, p := range a.cfg.PowerSamplers {
		cctx, cancel := context.WithTimeout(ctx, machine.PowerTimeout)
		var gpus []api.GPUPower
		var w float64
		var err error
		if lp, ok := p.(machine.LoadPowerSampler); ok {
			gpus, w, err = lp.SampleLoad(cctx, r.Load)
		} else {
			gpus, w, err = p.Sample(cctx)
		}
		cancel()
		if err != nil {
			if !ps.failing[i] && ctx.Err() == nil {
				a.log.Warn("cannot read power; will keep trying", "sampler", fmt.Sprintf("%T", p), "err", err)
			}
			ps.failing[i] = true
			continue
		}
		if ps.failing[i] {
			a.log.Info("power readings are back", "sampler", fmt.Sprintf("%T", p))
			ps.failing[i] = false
		}
		r.GPUs = append(r.GPUs, gpus...)
		if w > 0 {
			r.NodeW = w
		}
		got = got || len(gpus) > 0 || w > 0
	}
	if got {
		prev := ps.latest.Swap(&r)
		if prev == nil || prev.Load != r.Load {
			a.report()
		}
	}
}

// powerReading returns the latest reading, nil when there is none.
func (a *Agent) powerReading() *api.PowerReading { return a.power.latest.Load() }

// busyShare returns the node's load: the GPUs its running replicas hold over
// its GPUs.
func (a *Agent) busyShare() float64 {
	mine := make(map[int]bool, len(a.cfg.GPUs))
	for _, g := range a.cfg.GPUs {
		mine[g.Index] = true
	}
	busy := map[int]bool{}
	t := a.reps
	t.mu.Lock() // a live resize changes a running replica's spec under it
	for _, p := range t.procs {
		if p.status.Phase != api.ReplicaRunning {
			continue
		}
		for _, g := range p.spec.GPUs {
			if mine[g] {
				busy[g] = true
			}
		}
	}
	t.mu.Unlock()
	return float64(len(busy)) / float64(len(a.cfg.GPUs))
}
