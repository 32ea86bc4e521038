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
	delete(e.learn, j.rec.ID)
	if tab, ok := s.profileTable(); ok && j.mj != nil {
		if fj, ok := s.forecastJob(j, tab, now); ok {
			s.noteEstimate(j.rec.ID, fj.Length, now)
		}
	}
}

// noteEstimate keeps running job id's remaining length l at now, unless
// its class already has an earlier one (the first estimate of a class
// looks furthest ahead). Default lengths teach nothing. Called with s.mu
// held.
func (s *Scheduler) noteEstimate(id string, l forecast.Length, now time.Time) {
	c := l.Class()
	if c == forecast.ClassDefault || l.Remaining <= 0 {
		return
	}
	m := s.eta.learn[id]
	if m == nil {
		m = map[forecast.Class]estimate{}
		s.eta.learn[id] = m
	}
	if _, ok := m[c]; !ok {
		m[c] = estimate{remaining: l.Remaining, at: now}
	}
}

// noteEnd learns from job j, which stopped running at now in state st: a
// successful job's run time teaches its user's history and, against the
// first estimate of its remaining length in each class, the spread of
// that class. Called with s.mu held, after the record is applied.
func (s *Scheduler) noteEnd(j *job, st api.State, now time.Time) {
	e := s.eta
	ests := e.learn[j.rec.ID]
	delete(e.learn, j.rec.ID)
	if st.Final() {
		s.endSeries(j.rec.ID, now)
	}
	if st != api.Succeeded || j.rec.StartedAt == nil {
		return
	}
	for c, est := range ests {
		e.hist.ObserveRatio(c, est.remaining, now.Sub(est.at))
	}
	e.hist.ObserveRun(j.rec.User, now.Sub(*j.rec.StartedAt))
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
	for _, c := range forecast.Classes() {
		sp := s.eta.hist.Spread(c)
		out.Spreads = append(out.Spreads, api.ETASpread{Class: string(c), Bias: sp.Mu, Sigma: sp.Sigma, Samples: sp.Samples})
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
