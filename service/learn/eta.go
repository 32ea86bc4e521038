package learn

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/forecast"
	"github.com/gpusched/gpusched/service/store"
)

// What forecasts learn (docs/ETA.md): the forecasts served for waiting
// jobs are kept and compared with their actual starts (the accuracy), and
// finished jobs teach the spread of each class of lengths and their users'
// run times (the history: the forecasts' bias).
const (
	// etaKey is the store key of the learned history and the accuracy
	// records; etaSaveEvery bounds how often they are written.
	etaKey       = "forecast/history"
	etaSaveEvery = 5 * time.Second
)

// ETA is what a shell's forecasts learn, and the jobs' series (Series).
// It is not safe for concurrent use: the shell serializes its calls (the
// scheduler holds its mutex).
type ETA struct {
	log   *slog.Logger
	store store.Store
	hist  forecast.History
	acc   forecast.Accuracy
	// learn holds, per running job, its length as first estimated in each
	// class (at its start, or at a forecast while it ran): the bases of
	// the ratios its run time teaches.
	learn map[string]map[forecast.Class]estimate
	// Series are the jobs' progress and power over time.
	Series Series
	// changed: hist or acc changed since savedAt.
	changed bool
	savedAt time.Time
}

// estimate is a running job's remaining run time as estimated at at.
type estimate struct {
	remaining time.Duration
	at        time.Time
}

// NewETA returns an empty learner.
func NewETA(log *slog.Logger) *ETA {
	return &ETA{log: log, learn: map[string]map[forecast.Class]estimate{}, Series: Series{m: map[string]*jobSeries{}}}
}

// etaStored is what the store keeps under etaKey.
type etaStored struct {
	History  forecast.History  `json:"history"`
	Accuracy forecast.Accuracy `json:"accuracy"`
}

// Load restores the learned history and the accuracy records from st
// (where they are written from then on); records that cannot be read are
// logged and dropped (they are learned again).
func (e *ETA) Load(ctx context.Context, st store.Store, now time.Time) error {
	e.store, e.savedAt = st, now
	kv, ok, err := st.Get(ctx, etaKey)
	if err != nil {
		return fmt.Errorf("server: load %s: %w", etaKey, err)
	}
	if !ok {
		return nil
	}
	var stored etaStored
	if err := json.Unmarshal(kv.Value, &stored); err != nil {
		e.log.Error("stored forecast history is unreadable; learning it again", "key", etaKey, "err", err)
		return nil
	}
	stored.History.Clean()
	stored.Accuracy.Clean()
	e.hist, e.acc = stored.History, stored.Accuracy
	return nil
}

// History returns the learned history (spreads, users' run times).
func (e *ETA) History() *forecast.History { return &e.hist }

// Predict records a start forecast served for waiting job id.
func (e *ETA) Predict(id string, p forecast.Prediction) {
	e.acc.Predict(id, p)
	e.changed = true
}

// Started records, as job id starts at now, the outcomes of the
// predictions served while it waited.
func (e *ETA) Started(id string, now time.Time) {
	if _, ok := e.acc.Pending[id]; ok {
		e.acc.Started(id, now.UTC())
		e.changed = true
	}
	delete(e.learn, id)
}

// Estimate keeps running job id's remaining length l at now, unless its
// class already has an earlier one (the first estimate of a class looks
// furthest ahead). Default lengths teach nothing.
func (e *ETA) Estimate(id string, l forecast.Length, now time.Time) {
	c := l.Class()
	if c == forecast.ClassDefault || l.Remaining <= 0 {
		return
	}
	m := e.learn[id]
	if m == nil {
		m = map[forecast.Class]estimate{}
		e.learn[id] = m
	}
	if _, ok := m[c]; !ok {
		m[c] = estimate{remaining: l.Remaining, at: now}
	}
}

// Ended learns from job id of user, started at started, which stopped
// running at now in state st: a successful job's run time teaches its
// user's history and, against the first estimate of its remaining length
// in each class, the spread of that class.
func (e *ETA) Ended(id, user string, started *time.Time, st api.State, now time.Time) {
	ests := e.learn[id]
	delete(e.learn, id)
	if st.Final() {
		e.Series.end(id, now)
	}
	if st != api.Succeeded || started == nil {
		return
	}
	for c, est := range ests {
		e.hist.ObserveRatio(c, est.remaining, now.Sub(est.at))
	}
	e.hist.ObserveRun(user, now.Sub(*started))
	e.changed = true
}

// Forget drops what is kept of job id (a pruned job).
func (e *ETA) Forget(id string) {
	delete(e.Series.m, id)
	e.acc.Forget(id)
}

// Tick runs every round tick: it forgets the predictions of jobs that
// ended without starting (final reports whether a job is gone or final)
// and writes the history and the accuracy records when they changed, at
// most every etaSaveEvery (always with force).
func (e *ETA) Tick(now time.Time, force bool, final func(id string) bool) {
	for id := range e.acc.Pending {
		if final(id) {
			e.acc.Forget(id)
		}
	}
	if !e.changed || (!force && now.Sub(e.savedAt) < etaSaveEvery) {
		return
	}
	data, err := json.Marshal(etaStored{History: e.hist, Accuracy: e.acc})
	if err == nil {
		_, err = e.store.Txn(context.Background(), store.OpPut(etaKey, data))
	}
	if err != nil {
		e.log.Error("cannot store the forecast history", "err", err)
		return
	}
	e.changed, e.savedAt = false, now
}

// Accuracy returns how good the start forecasts served so far have been,
// and the learned spread of each kind of length.
func (e *ETA) Accuracy() api.ETAAccuracy {
	all, buckets := e.acc.Summarize()
	out := api.ETAAccuracy{ETAStats: etaStats(all), ByLead: []api.ETALeadStats{}, Spreads: []api.ETASpread{}}
	for _, b := range buckets {
		out.ByLead = append(out.ByLead, api.ETALeadStats{MinS: b.Min.Seconds(), MaxS: b.Max.Seconds(), ETAStats: etaStats(b.Stats)})
	}
	for _, c := range forecast.Classes() {
		sp := e.hist.Spread(c)
		out.Spreads = append(out.Spreads, api.ETASpread{Class: string(c), Bias: sp.Mu, Sigma: sp.Sigma, Samples: sp.Samples})
	}
	outs := e.acc.Outcomes
	for i := max(len(outs)-20, 0); i < len(outs); i++ {
		o := &outs[i]
		out.Recent = append(out.Recent, api.ETAPrediction{Job: o.Job, At: o.At, Predicted: o.Start, P10: o.P10, P90: o.P90,
			Actual: o.Actual, ErrorS: o.Error().Seconds()})
	}
	return out
}

func etaStats(st forecast.Stats) api.ETAStats {
	return api.ETAStats{Jobs: st.Jobs, Predictions: st.Predictions, MeanAbsErrorS: st.MeanAbsError.Seconds(),
		MedianAbsErrorS: st.MedianAbsError.Seconds(), P90AbsErrorS: st.P90AbsError.Seconds(), BiasS: st.Bias.Seconds(),
		InRange: st.InRange, Within10: st.Good}
}
