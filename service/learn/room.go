package learn

import (
	"sync"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// Room is online learning as a shell's callers reach it: the learned
// profiles and what forecasts learn, under the lock the shell serializes
// its calls with. Package scheduler's Scheduler.Learning returns it; its
// methods are safe for concurrent use (each holds the lock).
type Room struct {
	mu       sync.Locker
	prof     *Profiles
	eta      *ETA
	replicas func(id string) ([]ledger.Replica, bool)
}

// NewRoom returns the room of prof and eta, whose calls are serialized by
// mu; replicas returns the current replicas of job id (false: no such
// job), called with mu held.
func NewRoom(mu sync.Locker, prof *Profiles, eta *ETA, replicas func(id string) ([]ledger.Replica, bool)) *Room {
	return &Room{mu: mu, prof: prof, eta: eta, replicas: replicas}
}

// Profiles returns the learned throughputs (api.ProfileOnline) and, with
// prerun, the pre-run matrix's points too (api.ProfilePreRun).
func (r *Room) Profiles(prerun bool) []api.ProfileEntry {
	r.mu.Lock()
	out, base := r.prof.Entries()
	r.mu.Unlock()
	if prerun {
		out = append(out, PreRun(base)...)
	}
	return out
}

// ETAAccuracy returns how good the start forecasts served so far have
// been, and the learned spread of each kind of length.
func (r *Room) ETAAccuracy() api.ETAAccuracy {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.eta.Accuracy()
}

// Series returns what the dashboard draws for job id: its current
// replicas, progress and power over time. api.ErrNotFound.
func (r *Room) Series(id string) (api.JobSeries, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reps, ok := r.replicas(id)
	if !ok {
		return api.JobSeries{}, api.NotFound("no job %q", id)
	}
	return r.eta.Series.View(id, reps), nil
}
