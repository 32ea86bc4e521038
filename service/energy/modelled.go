package energy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/service/store"
)

// The power model's energy of what actually ran (docs/ENERGY.md, "What
// energy placement saved"): every ready node's modelled draw at its busy
// GPUs, integrated from round to round (a busy count changes only in a
// round, or by an end that triggers one) and at every tick. Its value at
// the first submission and at the latest end of a job bound the window of
// the pack replay, so that the report sets the same model's energy of the
// run as it went beside the pack figure: same model, same jobs, same
// span.
const modelKey = "energy/model"

// modelAccount is the cluster's modelled energy of what ran.
type modelAccount struct {
	// J is the energy integrated up to At.
	J  float64   `json:"j"`
	At time.Time `json:"at"`
	// First is J at the first submission, Last at the latest end of a
	// job, LastAt that end's time; nil before either.
	First   *float64   `json:"first,omitempty"`
	Last    *float64   `json:"last,omitempty"`
	LastAt  *time.Time `json:"last_at,omitempty"`
	dirty   bool
	savedAt time.Time
}

// loadModel reads the stored account.
func (l *Live) loadModel(ctx context.Context) error {
	kv, ok, err := l.store.Get(ctx, modelKey)
	if err != nil {
		return fmt.Errorf("server: load the modelled energy: %w", err)
	}
	if ok {
		if err := json.Unmarshal(kv.Value, &l.model); err != nil {
			l.log.Error("stored modelled energy is unreadable; dropped", "err", err)
			l.model = modelAccount{}
		}
	}
	l.model.At = time.Time{} // nothing ran while the server was down
	return nil
}

// Integrate adds the ready nodes' modelled draw since the last call
// (nodes without power figures add nothing). The shell calls it before
// busy GPUs change (a round).
func (l *Live) Integrate(w World, now time.Time) {
	m := &l.model
	if !m.At.IsZero() && now.After(m.At) {
		sec := now.Sub(m.At).Seconds()
		_, idx := w.Cluster()
		for name := range idx {
			if watts, ok := l.classOf(node(w, name)).modelWatts(w.UsedGPUs(name)); ok {
				m.J += watts * sec
				m.dirty = true
			}
		}
	}
	if m.At.IsZero() || now.After(m.At) {
		m.At = now
	}
}

// NoteSubmit marks the first submission.
func (l *Live) NoteSubmit(w World, now time.Time) {
	if l.model.First == nil {
		l.Integrate(w, now)
		l.model.First, l.model.dirty = ptr(l.model.J), true
	}
}

// NoteEnd marks the latest end of a job.
func (l *Live) NoteEnd(w World, now time.Time) {
	l.Integrate(w, now)
	m := &l.model
	m.Last, m.LastAt, m.dirty = ptr(m.J), ptr(now.UTC()), true
}

// ModelledRun returns the modelled energy of the run in kWh over the
// replay's span: from the first submission to the latest end, or to now
// while jobs run.
func (l *Live) ModelledRun(w World, now time.Time, running bool) float64 {
	l.Integrate(w, now)
	m := &l.model
	if m.First == nil {
		return 0
	}
	end := m.J
	if !running && m.Last != nil {
		end = *m.Last
	}
	return max(end-*m.First, 0) / JoulesPerKWh
}

// saveModel writes the account when it changed, at most every
// powerSaveEvery (at once with force; an error is logged).
func (l *Live) saveModel(now time.Time, force bool) {
	m := &l.model
	if !m.dirty || (!force && now.Sub(m.savedAt) < powerSaveEvery) {
		return
	}
	m.savedAt = now
	data, err := json.Marshal(m)
	if err == nil {
		_, err = l.store.Txn(writeCtx(), store.OpPut(modelKey, data))
	}
	if err != nil {
		l.log.Error("cannot store the modelled energy", "err", err)
		return
	}
	m.dirty = false
}
