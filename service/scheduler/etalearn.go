package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/forecast"
	"github.com/gpusched/gpusched/service/store"
)

// etaStored is what the store keeps under etaKey.
type etaStored struct {
	History  forecast.History  `json:"history"`
	Accuracy forecast.Accuracy `json:"accuracy"`
}

// loadETA restores the learned history and the accuracy records; records
// that cannot be read are logged and dropped (they are learned again).
func (s *Scheduler) loadETA(ctx context.Context) error {
	s.eta = newETAState()
	s.eta.savedAt = s.now()
	kv, ok, err := s.store.Get(ctx, etaKey)
	if err != nil {
		return fmt.Errorf("server: load %s: %w", etaKey, err)
	}
	if !ok {
		return nil
	}
	var st etaStored
	if err := json.Unmarshal(kv.Value, &st); err != nil {
		s.log.Error("stored forecast history is unreadable; learning it again", "key", etaKey, "err", err)
		return nil
	}
	st.History.Clean()
	st.Accuracy.Clean()
	s.eta.hist, s.eta.acc = st.History, st.Accuracy
	return nil
}

// noteStart records, as job j starts at now, the outcomes of the
// predictions served while it waited and its length as estimated now (the
// base of what its run time will teach). Called with s.mu held, after the
// start is applied.
func (s *Scheduler) noteStart(j *job, now time.Time) {
	e := s.eta
	if _, ok := e.acc.Pending[j.rec.ID]; ok {
		e.acc.Started(j.rec.ID, now.UTC())
		e.changed = true
	}
	delete(e.starts, j.rec.ID)
	if tab, ok := s.profileTable(); ok && j.mj != nil {
		if fj, ok := s.forecastJob(j, tab, now); ok && fj.Length.Kind != forecast.KindDefault {
			e.starts[j.rec.ID] = fj.Length
		}
	}
}

// noteEnd learns from job j, which stopped running at now in state st: a
// successful job's run time teaches its user's history and, against the
// length estimated at its start, the spread of that kind of length.
// Called with s.mu held, after the record is applied.
func (s *Scheduler) noteEnd(j *job, st api.State, now time.Time) {
	e := s.eta
	est, ok := e.starts[j.rec.ID]
	delete(e.starts, j.rec.ID)
	if st.Final() {
		s.endSeries(j.rec.ID, now)
	}
	if st != api.Succeeded || j.rec.StartedAt == nil {
		return
	}
	run := now.Sub(*j.rec.StartedAt)
	if ok && run > 0 {
		e.hist.ObserveRatio(est.Kind, est.Remaining, run)
	}
	e.hist.ObserveRun(j.rec.User, run)
	e.changed = true
}

// tickETA runs every round tick: it forgets the predictions of jobs that
// ended without starting and writes the history and the accuracy records
// when they changed, at most every etaSaveEvery (always with force).
// Called with s.mu held.
func (s *Scheduler) tickETA(now time.Time, force bool) {
	e := s.eta
	for id := range e.acc.Pending {
		if j := s.jobs[id]; j == nil || j.rec.State.Final() {
			e.acc.Forget(id)
		}
	}
	if !e.changed || (!force && now.Sub(e.savedAt) < etaSaveEvery) {
		return
	}
	data, err := json.Marshal(etaStored{History: e.hist, Accuracy: e.acc})
	if err == nil {
		_, err = s.store.Txn(writeCtx(), store.OpPut(etaKey, data))
	}
	if err != nil {
		s.log.Error("cannot store the forecast history", "err", err)
		return
	}
	e.changed, e.savedAt = false, now
}

// flushETA writes what tickETA has not written yet (on Close).
func (s *Scheduler) flushETA() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tickETA(s.now(), true)
}

// ETAAccuracy returns how good the start forecasts served so far have
// been, and the learned spread of each kind of length.
func (s *Scheduler) ETAAccuracy() api.ETAAccuracy {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, buckets := s.eta.acc.Summarize()
	out := api.ETAAccuracy{ETAStats: etaStats(all), ByLead: []api.ETALeadStats{}, Spreads: []api.ETASpread{}}
	for _, b := range buckets {
		out.ByLead = append(out.ByLead, api.ETALeadStats{MinS: b.Min.Seconds(), MaxS: b.Max.Seconds(), ETAStats: etaStats(b.Stats)})
	}
	for _, k := range forecast.Kinds() {
		sp := s.eta.hist.Spread(k)
		out.Spreads = append(out.Spreads, api.ETASpread{Length: string(k), Bias: sp.Mu, Sigma: sp.Sigma, Samples: sp.Samples})
	}
	outs := s.eta.acc.Outcomes
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
