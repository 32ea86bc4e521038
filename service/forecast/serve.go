package forecast

import (
	"fmt"
	"sync"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

// Served is one forecast as a shell serves it (docs/ETA.md), and what it
// was made from: the shell fills it from its live state (Add, one job at
// a time) and Cache runs it.
type Served struct {
	// Key and State identify what it was made from (the shell's
	// fingerprint of its jobs and nodes, and its model state), At when.
	Key   uint64
	State any
	At    time.Time
	// None says why there is no forecast (no node is registered); Res is
	// nil then.
	None    string
	Res     *Result
	index   map[string]int
	lengths []Length
	spreads map[Class]Spread
	kinds   map[string]int
	names   [3]string
}

// NewServed starts the forecast made at at with the learned spreads and
// the stage names (policy, placer, scaler) it runs.
func NewServed(at time.Time, spreads map[Class]Spread, names [3]string) *Served {
	return &Served{At: at, index: map[string]int{}, spreads: spreads, kinds: map[string]int{}, names: names}
}

// Spreads returns the spreads the forecast runs with.
func (f *Served) Spreads() map[Class]Spread { return f.spreads }

// Add records job id, of length l, as the snapshot's next job and returns
// its index there (its Job.Seq).
func (f *Served) Add(id string, l Length) int {
	i := len(f.lengths)
	f.index[id] = i
	f.lengths = append(f.lengths, l)
	f.kinds[string(l.Kind)]++
	return i
}

// ETA returns the forecast of active job id, in state st and started at
// started (nil unless it runs), and the start prediction it makes for a
// waiting job (nil for a running one or without a forecast), which the
// shell keeps for the accuracy (learn.ETA.Predict).
func (f *Served) ETA(id string, st api.State, started *time.Time) (api.ETA, *Prediction) {
	out := api.ETA{Job: id, State: st, ForecastAt: f.At.UTC()}
	out.Basis.Policy, out.Basis.Placer, out.Basis.Scaler = f.names[0], f.names[1], f.names[2]
	i, ok := f.index[id]
	if f.Res == nil || !ok {
		out.Reason = f.None
		if out.Reason == "" {
			out.Reason = "not in the latest forecast: the model does not hold it as its record says"
		}
		if st == api.Running {
			out.PredictedStart = started
		}
		return out, nil
	}
	e, l := f.Res.ETAs[i], f.lengths[i]
	sp := f.spreads[l.Class()]
	out.Basis = api.ETABasis{Length: string(l.Kind), Speed: string(l.Speed), RemainingS: l.Remaining.Seconds(),
		RemainingSteps: l.Steps, Detail: l.Detail, Bias: sp.Mu, Sigma: sp.Sigma, Samples: sp.Samples,
		Runs: f.Res.Runs, Policy: f.names[0], Placer: f.names[1], Scaler: f.names[2], Jobs: f.kinds}
	if l.Steps > 0 {
		out.Basis.RemainingS = 0
	}
	out.PredictedStart, out.PredictedFinish = wallTime(e.Start), wallTime(e.Finish)
	out.StartP10, out.StartP50, out.StartP90 = wallTime(e.StartQ[0]), wallTime(e.StartQ[1]), wallTime(e.StartQ[2])
	out.FinishP10, out.FinishP50, out.FinishP90 = wallTime(e.FinishQ[0]), wallTime(e.FinishQ[1]), wallTime(e.FinishQ[2])
	out.Reason = e.Reason
	if st == api.Running && started != nil {
		out.PredictedStart, out.StartP10, out.StartP50, out.StartP90 = started, started, started, started
	}
	if st != api.Running && out.PredictedStart != nil && out.StartP10 != nil && out.StartP90 != nil {
		return out, &Prediction{At: f.At.UTC(), Start: *out.PredictedStart, P10: *out.StartP10, P90: *out.StartP90}
	}
	return out, nil
}

// wallTime turns a model time into a UTC time; nil for Never.
func wallTime(t model.Time) *time.Time {
	if t == Never {
		return nil
	}
	w := time.UnixMilli(int64(t)).UTC()
	return &w
}

// Cache holds a shell's latest forecast. Concurrent requests wait for a
// forecast that runs and share it.
type Cache struct {
	mu  sync.Mutex
	cur *Served
}

// Get returns the forecast take says is current: take (called with the
// cache's lock held; it may read Latest) returns the latest forecast when
// it is still good (cached), else a new one to run on snap (nil: nothing
// to forecast on), which Get runs and keeps.
func (c *Cache) Get(take func() (f *Served, snap *Snapshot, cached bool)) (*Served, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, snap, cached := take()
	if cached {
		return f, nil
	}
	if snap != nil {
		res, err := Run(snap, Options{Seed: f.Key, Spreads: f.spreads})
		if err != nil {
			return nil, fmt.Errorf("forecast: %w", err)
		}
		f.Res = res
	}
	c.cur = f
	return f, nil
}

// Latest returns the latest forecast (nil before the first); call it from
// Get's take.
func (c *Cache) Latest() *Served { return c.cur }
