package learn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// Online profiles (docs/PROFILES.md, "Online profiles"; docs/SERVER.md):
// two progress reports of one execution of a job with a model give a
// measured steps/s for (model, GPU type, GPU count); profile.Online keeps
// the estimates, the store keeps them under profileKey, and the matrix the
// engine uses is the embedded pre-run matrix with the estimates laid over it.
const (
	// profileKey is the store key of the learned estimates.
	profileKey = "profiles/online"
	// profileSaveEvery bounds how often the estimates are written.
	profileSaveEvery = 5 * time.Second
)

// Profiles is a shell's online profiler: it learns throughputs from
// progress reports (ObserveProgress) and merges them over the pre-run
// matrix for the engine. It is not safe for concurrent use: the shell
// serializes its calls (the scheduler holds its mutex).
type Profiles struct {
	log   *slog.Logger
	store store.Store
	// base is the pre-run matrix (embedded in the binary).
	base   *profile.Matrix
	online *profile.Online
	// rebuilds paces the rebuilds of the shell's matrix (and the model's
	// profile table): at once for a new (model, GPU type, GPU count), at
	// most every profile.RebuildEvery for changed estimates.
	rebuilds profile.Rebuilds
	// next is a merged matrix that the next rebuild installs; nil when
	// there is none.
	next *profile.Matrix
	// saved is the online version in the store; savedAt when it was
	// written.
	saved   uint64
	savedAt time.Time
	// marks hold, per job, the progress report that opens its next sample
	// (profile.Online.Advance).
	marks map[string]profile.Mark
}

// NewProfiles returns a profiler over the pre-run matrix base.
func NewProfiles(base *profile.Matrix, log *slog.Logger) (*Profiles, error) {
	o, err := profile.NewOnline(profile.DefaultOnlineWeight)
	if err != nil {
		return nil, err
	}
	return &Profiles{log: log, base: base, online: o, marks: map[string]profile.Mark{}}, nil
}

// Load restores the learned estimates from st (where they are written from
// then on) and returns the merged matrix to install, nil when nothing was
// learned; call it before the jobs are loaded, so that their model indices
// come from it. Stored estimates that cannot be read are logged and
// dropped: they are learned again.
func (ps *Profiles) Load(ctx context.Context, st store.Store, now time.Time) (*profile.Matrix, error) {
	ps.store = st
	kv, ok, err := st.Get(ctx, profileKey)
	if err != nil {
		return nil, fmt.Errorf("server: load %s: %w", profileKey, err)
	}
	if ok {
		var os profile.OnlineState
		if err := json.Unmarshal(kv.Value, &os); err == nil {
			err = ps.online.Restore(os)
		}
		if err != nil {
			ps.log.Error("stored online profiles are unreadable; learning them again", "key", profileKey, "err", err)
		}
	}
	ps.saved, ps.savedAt = ps.online.Version(), now
	var merged *profile.Matrix
	if ps.online.Len() > 0 {
		merged = ps.online.Merge(ps.base)
	}
	ps.rebuilds.Built(ps.online, now.UnixNano())
	return merged, nil
}

// Next returns a merged matrix waiting for the shell's rebuild, once; nil
// when there is none.
func (ps *Profiles) Next() *profile.Matrix {
	m := ps.next
	ps.next = nil
	return m
}

// Pending reports whether a merged matrix waits for the rebuild.
func (ps *Profiles) Pending() bool { return ps.next != nil }

// Online returns the learned estimates.
func (ps *Profiles) Online() *profile.Online { return ps.online }

// Progress is a progress report of one execution of a running job: its
// attempt, membership generation, live GPUs and their type.
type Progress struct {
	Job, Model, GPUType       string
	Attempt, Generation, GPUs int
	Steps                     int64
	At                        time.Time
}

// ObserveProgress learns from a new progress report p: with the job's
// mark of the same execution at least profile.MarkMinGap older it makes a
// sample (profile.Online.Advance). Reports of jobs without a model or on
// GPUs of several types (GPUType "") give none.
func (ps *Profiles) ObserveProgress(p Progress) {
	if p.Model == "" || p.GPUType == "" {
		ps.Forget(p.Job)
		return
	}
	m, err := ps.online.Advance(p.Model, ps.marks[p.Job], profile.Mark{Attempt: p.Attempt, Generation: p.Generation,
		GPUs: p.GPUs, GPUType: p.GPUType, Steps: p.Steps, At: p.At.UnixNano()})
	switch {
	case errors.Is(err, profile.ErrSample):
		ps.log.Debug("progress sample ignored", "job", p.Job, "why", err)
	case err != nil:
		ps.log.Warn("progress sample", "job", p.Job, "err", err)
	}
	ps.marks[p.Job] = m
}

// Forget drops job id's mark: its next report starts over.
func (ps *Profiles) Forget(id string) { delete(ps.marks, id) }

// Rate returns the latest measured steps/s of running job id (0 when none
// is known).
func (ps *Profiles) Rate(id string) float64 { return ps.marks[id].Rate }

// Tick runs every round tick: it forgets the marks of jobs that are not
// active, writes changed estimates at most every profileSaveEvery, and
// schedules a rebuild of the matrix when they changed (at once for a new
// entry, else at most every profile.RebuildEvery); it reports whether it did
// (Next then returns the matrix).
func (ps *Profiles) Tick(now time.Time, active func(id string) bool) bool {
	for id := range ps.marks {
		if !active(id) {
			delete(ps.marks, id)
		}
	}
	v := ps.online.Version()
	if v != ps.saved && now.Sub(ps.savedAt) >= profileSaveEvery {
		_ = ps.save(now) // logged; tried again next tick
	}
	if ps.rebuilds.Due(ps.online, now.UnixNano()) {
		ps.next = ps.online.Merge(ps.base)
		return true
	}
	return false
}

// save writes the estimates to the store (none without a store: a shell
// that never called Load keeps them in memory, as the Kubernetes mode
// does).
func (ps *Profiles) save(now time.Time) error {
	v := ps.online.Version()
	if ps.store == nil {
		ps.saved, ps.savedAt = v, now
		return nil
	}
	data, err := json.Marshal(ps.online.State())
	if err == nil {
		_, err = ps.store.Txn(context.Background(), store.OpPut(profileKey, data))
	}
	if err != nil {
		ps.log.Error("cannot store the online profiles", "err", err)
		return err
	}
	ps.saved, ps.savedAt = v, now
	return nil
}

// Flush writes estimates not yet in the store (the shell calls it as it
// closes).
func (ps *Profiles) Flush(now time.Time) {
	if ps.online.Version() != ps.saved {
		_ = ps.save(now)
	}
}

// Entries returns the learned throughputs (api.ProfileOnline) and the
// pre-run matrix base (Base) for the pre-run points.
func (ps *Profiles) Entries() (online []api.ProfileEntry, base *profile.Matrix) {
	online = []api.ProfileEntry{}
	for _, e := range ps.online.State().Entries {
		online = append(online, api.ProfileEntry{Model: e.Model, GPUType: e.GPUType, GPUs: e.GPUs,
			StepsPerS: e.Rate, Samples: e.Samples, Source: api.ProfileOnline})
	}
	return online, ps.base
}

// PreRun returns the pre-run matrix's points (api.ProfilePreRun).
func PreRun(base *profile.Matrix) []api.ProfileEntry {
	var out []api.ProfileEntry
	for _, m := range base.Models {
		for _, t := range base.Types {
			for _, p := range base.Points(m, t) {
				out = append(out, api.ProfileEntry{Model: m, GPUType: t, GPUs: p.GPUs,
					StepsPerS: p.Rate, Source: api.ProfilePreRun})
			}
		}
	}
	return out
}
