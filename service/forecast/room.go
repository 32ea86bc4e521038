package forecast

import (
	"sync"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// World is what a Room reads of its shell, called with the shell's lock
// held.
type World interface {
	// Now is the shell's clock.
	Now() time.Time
	// Job returns the record of job id (false: no such job).
	Job(id string) (*ledger.Record, bool)
	// Jobs returns the active jobs, oldest first.
	Jobs() []Live
	// Key returns the fingerprint of jobs and the nodes (Key) and the
	// shell's model state, which identify a forecast.
	Key(jobs []Live) (uint64, any)
	// Inputs returns what Take reads at now besides the jobs.
	Inputs(now time.Time) Inputs
	// Estimate learns the length of running job id as estimated at now;
	// Predict records a start forecast served for waiting job id.
	Estimate(id string, l Length, now time.Time)
	Predict(id string, p Prediction)
}

// Room is forecasts as a shell's callers reach them (docs/ETA.md): a
// snapshot of the live state is simulated forward on demand, at most once
// per change of the jobs or nodes and at least every MaxAge (Cache); the
// forecasts served for waiting jobs are recorded (World.Predict). Package
// scheduler's Scheduler.Forecasts returns it; its methods are safe for
// concurrent use.
type Room struct {
	cache Cache
	mu    sync.Locker
	w     World
}

// NewRoom returns the forecasts of the shell w, whose calls are serialized
// by mu.
func NewRoom(mu sync.Locker, w World) *Room { return &Room{mu: mu, w: w} }

// ETA returns the forecast of active job id. api.ErrNotFound;
// api.ErrConflict for a job that has ended.
func (r *Room) ETA(id string) (api.ETA, error) {
	r.mu.Lock()
	rec, ok := r.w.Job(id)
	var st api.State
	if ok {
		st = rec.State
	}
	r.mu.Unlock()
	switch {
	case !ok:
		return api.ETA{}, api.NotFound("no job %q", id)
	case st.Final():
		return api.ETA{}, api.Conflict("job %s has %s: it has no forecast", id, st)
	}
	f, err := r.forecast()
	if err != nil {
		return api.ETA{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec.State.Final() {
		return api.ETA{}, api.Conflict("job %s has %s: it has no forecast", id, rec.State)
	}
	return r.etaOf(f, rec), nil
}

// ETAs returns the forecast of every active job, oldest first.
func (r *Room) ETAs() ([]api.ETA, error) {
	f, err := r.forecast()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	jobs := r.w.Jobs()
	out := make([]api.ETA, len(jobs))
	for i, j := range jobs {
		out[i] = r.etaOf(f, j.Rec)
	}
	return out, nil
}

// forecast returns the forecast of the current round, running it when the
// cached one is older.
func (r *Room) forecast() (*Served, error) {
	return r.cache.Get(func() (*Served, *Snapshot, bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		now := r.w.Now()
		jobs := r.w.Jobs()
		key, state := r.w.Key(jobs)
		if c := r.cache.Latest(); c != nil && c.Key == key && c.State == state && now.Sub(c.At) < MaxAge {
			return c, nil, true
		}
		f, snap := Take(r.w.Inputs(now), jobs, func(id string, l Length) { r.w.Estimate(id, l, now) })
		f.Key, f.State = key, state
		return f, snap, false
	})
}

// etaOf returns the ETA of the job of rec from forecast f and records a
// waiting job's prediction (for the accuracy). Called with r.mu held.
func (r *Room) etaOf(f *Served, rec *ledger.Record) api.ETA {
	out, p := f.ETA(rec.ID, rec.State, rec.StartedAt)
	if p != nil {
		r.w.Predict(rec.ID, *p)
	}
	return out
}
