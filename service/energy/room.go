package energy

import (
	"sync"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/replay"
)

// Room is live energy as a shell's callers reach it: a Live, the lock the
// shell serializes its calls with, the World it reads the shell through,
// and the names of the policy and placer the report replays. Package
// scheduler's Scheduler.Energy returns it; its methods are safe for
// concurrent use (each holds the lock).
type Room struct {
	live   *Live
	mu     sync.Locker
	world  World
	names  func() (policy, placer string)
	policy string
}

// NewRoom returns the room of live, whose calls are serialized by mu,
// reading w. names returns the engine's policy and placer now; policy is
// the configured policy, which the pack replay runs.
func NewRoom(live *Live, mu sync.Locker, w World, names func() (policy, placer string), policy string) *Room {
	return &Room{live: live, mu: mu, world: w, names: names, policy: policy}
}

// Report returns the energy report. The pack replay runs outside the
// lock.
func (r *Room) Report() api.EnergyReport {
	r.mu.Lock()
	pol, pla := r.names()
	rep, nodes, jobs, model := r.live.Prepare(r.world, pol, pla)
	r.mu.Unlock()
	AddReplay(&rep, nodes, jobs, r.policy, model)
	return rep
}

// Replay returns the pack replay's inputs as files gpusched sim reads;
// api.ErrConflict when there is nothing to replay.
func (r *Room) Replay() (api.EnergyReplay, error) {
	r.mu.Lock()
	nodes, jobs := r.live.ReplayInputs(r.world, r.world.Jobs())
	r.mu.Unlock()
	cluster, trace, err := replay.Files(nodes, jobs)
	if err != nil {
		return api.EnergyReplay{}, api.Conflict("nothing to replay: %v", err)
	}
	return api.EnergyReplay{Cluster: string(cluster), Trace: string(trace), Policy: r.policy}, nil
}

// Calibration returns the thresholds in use for every class of a known
// node and every algorithm type it has samples or thresholds of, by class
// and type (the default type first).
func (r *Room) Calibration() api.Calibration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live.Calibration(r.world)
}

// Recalibrate fits every class and algorithm type with enough samples now,
// whether or not they span the load range or are new, and returns the
// thresholds in use afterwards (a failed fit shows its error and keeps the
// thresholds). gpusched calibrate --from-server calls it.
func (r *Room) Recalibrate() api.Calibration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live.Recalibrate(r.world)
}

// PowerSamples returns the stored power samples of node name as the rows
// gpusched calibrate reads (one per load, by load); api.ErrNotFound for a
// node the shell neither knows nor has samples of.
func (r *Room) PowerSamples(name string) ([]PowerSample, error) {
	r.mu.Lock()
	rows, ok := r.live.Samples(name)
	_, known := r.world.Node(name)
	r.mu.Unlock()
	if !known && !ok {
		return nil, api.NotFound("no node %q", name)
	}
	return rows, nil
}

// Tick runs the live energy work of a periodic tick.
func (r *Room) Tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live.Tick(r.world)
}
