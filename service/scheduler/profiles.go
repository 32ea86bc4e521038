package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/core/model"
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
	// profileMinInterval is the shortest interval between the two reports
	// of a sample: shorter ones are dominated by step granularity.
	profileMinInterval = 10 * time.Second
	// profileSaveEvery bounds how often the estimates are written.
	profileSaveEvery = 5 * time.Second
	// profileRefresh bounds how often changed estimates rebuild the
	// matrix and the model's profile table; a new (model, GPU type, GPU
	// count) rebuilds them at the next tick.
	profileRefresh = 30 * time.Second
)

// profileState is the scheduler's online profiler. Guarded by Scheduler.mu.
type profileState struct {
	// base is the pre-run matrix (embedded in the binary).
	base   *profile.Matrix
	online *profile.Online
	// built is the online version of the scheduler's matrix, builtLen its
	// number of estimates and builtAt when it was made.
	built    uint64
	builtLen int
	builtAt  time.Time
	// next is a merged matrix that the next rebuild installs; nil when
	// there is none.
	next *profile.Matrix
	// saved is the online version in the store; savedAt when it was
	// written.
	saved   uint64
	savedAt time.Time
	// marks hold, per job, the progress report that opens its next sample.
	marks map[string]progressMark
}

// progressMark is a report of one execution of a job: a sample needs two
// marks with the same attempt, generation, GPU count and GPU type.
type progressMark struct {
	attempt, generation, gpus int
	gpuType                   string
	steps                     int64
	at                        time.Time
	// rate is the latest steps/s measured in this execution (0: none yet).
	rate float64
}

func newProfileState(base *profile.Matrix) (*profileState, error) {
	o, err := profile.NewOnline(profile.DefaultOnlineWeight)
	if err != nil {
		return nil, err
	}
	return &profileState{base: base, online: o, marks: map[string]progressMark{}}, nil
}

// loadProfiles restores the learned estimates from the store and installs
// the merged matrix; call it before the jobs are loaded, so that their
// model indices come from it. Stored estimates that cannot be read are
// logged and dropped: they are learned again.
func (s *Scheduler) loadProfiles(ctx context.Context) error {
	ps, err := newProfileState(s.matrix)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.prof = ps
	kv, ok, err := s.store.Get(ctx, profileKey)
	if err != nil {
		return fmt.Errorf("server: load %s: %w", profileKey, err)
	}
	if ok {
		var st profile.OnlineState
		if err := json.Unmarshal(kv.Value, &st); err == nil {
			err = ps.online.Restore(st)
		}
		if err != nil {
			s.log.Error("stored online profiles are unreadable; learning them again", "key", profileKey, "err", err)
		}
	}
	ps.saved, ps.savedAt = ps.online.Version(), s.now()
	if ps.online.Len() > 0 {
		s.setMatrix(ps.online.Merge(ps.base))
	}
	ps.built, ps.builtLen, ps.builtAt = ps.online.Version(), ps.online.Len(), s.now()
	return nil
}

// setMatrix makes m the scheduler's matrix: job types are numbered by a
// profile.Table of m (a job type m gained shifts the others), and every
// active job's model index is derived again.
func (s *Scheduler) setMatrix(m *profile.Matrix) {
	t, err := profile.NewTable(m, &model.Cluster{}, s.ref)
	if err != nil {
		s.log.Error("cannot use the merged throughput matrix", "err", err)
		return
	}
	s.matrix = m
	s.models = make(map[string]int, len(t.Models()))
	for _, name := range t.Models() {
		s.models[name] = t.ModelIndex(name)
	}
	for _, j := range s.active {
		if j.mj != nil {
			j.mj.Model = t.ModelIndex(j.rec.Model)
		}
	}
}

// swapMatrix installs a merged matrix waiting for the rebuild (which
// calls it first, so that the new table and the jobs' indices agree).
func (s *Scheduler) swapMatrix() {
	if s.prof == nil || s.prof.next == nil {
		return
	}
	s.setMatrix(s.prof.next)
	s.prof.next = nil
}

// observeProgress learns from a new progress report of active job j whose
// record (before the report) is cur: with the job's mark of the same
// execution at least profileMinInterval older it makes a sample. Jobs
// without a model, not running, being stopped, or on GPUs of several types
// give none.
func (s *Scheduler) observeProgress(j *job, cur *record, rep progressReport) {
	ps := s.prof
	if ps == nil {
		return
	}
	typ := s.jobGPUType(cur)
	if cur.Model == "" || cur.State != api.Running || cur.Stopping != "" || typ == "" {
		delete(ps.marks, cur.ID)
		return
	}
	m := progressMark{attempt: cur.Attempt, generation: cur.Generation, gpus: cur.liveGPUs(), gpuType: typ,
		steps: rep.steps, at: rep.at}
	old, ok := ps.marks[cur.ID]
	if !ok || old.attempt != m.attempt || old.generation != m.generation || old.gpus != m.gpus || old.gpuType != typ ||
		!rep.at.After(old.at) {
		ps.marks[cur.ID] = m // a new execution (restart, resize, migration): start over
		return
	}
	d := rep.at.Sub(old.at)
	if d < profileMinInterval {
		return
	}
	smp := profile.Sample{Model: cur.Model, GPUType: typ, GPUs: m.gpus, Steps: float64(rep.steps - old.steps), Seconds: d.Seconds()}
	switch err := ps.online.Observe(smp); {
	case err == nil:
		m.rate = smp.Steps / smp.Seconds
	case errors.Is(err, profile.ErrSample):
		m.rate = old.rate
		s.log.Debug("progress sample ignored", "job", cur.ID, "why", err)
	default:
		s.log.Warn("progress sample", "job", cur.ID, "err", err)
	}
	ps.marks[cur.ID] = m
}

// jobGPUType returns the GPU type of a running job's live replicas, ""
// when they are on several types (or none).
func (s *Scheduler) jobGPUType(rec *record) string {
	typ := ""
	for _, rr := range rec.Replicas {
		if rr.Done {
			continue
		}
		n := s.nodes[rr.Node]
		if n == nil || (typ != "" && n.typ != typ) {
			return ""
		}
		typ = n.typ
	}
	return typ
}

// jobRate returns the latest measured steps/s of running job id (0 when
// none is known).
func (s *Scheduler) jobRate(id string) float64 {
	if s.prof == nil {
		return 0
	}
	return s.prof.marks[id].rate
}

// tickProfiles runs every round tick: it forgets the marks of jobs that
// ended, writes changed estimates at most every profileSaveEvery, and
// schedules a rebuild of the matrix when they changed (at once for a new
// entry, else at most every profileRefresh).
func (s *Scheduler) tickProfiles(now time.Time) {
	ps := s.prof
	if ps == nil {
		return
	}
	for id := range ps.marks {
		if s.active[id] == nil {
			delete(ps.marks, id)
		}
	}
	v := ps.online.Version()
	if v != ps.saved && now.Sub(ps.savedAt) >= profileSaveEvery {
		_ = s.saveProfiles(now) // logged; tried again next tick
	}
	if v != ps.built && (ps.online.Len() != ps.builtLen || now.Sub(ps.builtAt) >= profileRefresh) {
		ps.next = ps.online.Merge(ps.base)
		ps.built, ps.builtLen, ps.builtAt = v, ps.online.Len(), now
		s.dirty = true
		s.notify()
	}
}

// saveProfiles writes the estimates to the store.
func (s *Scheduler) saveProfiles(now time.Time) error {
	ps := s.prof
	v := ps.online.Version()
	data, err := json.Marshal(ps.online.State())
	if err == nil {
		_, err = s.store.Txn(writeCtx(), store.OpPut(profileKey, data))
	}
	if err != nil {
		s.log.Error("cannot store the online profiles", "err", err)
		return err
	}
	ps.saved, ps.savedAt = v, now
	return nil
}

// flushProfiles writes estimates not yet in the store (on Close).
func (s *Scheduler) flushProfiles() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prof != nil && s.prof.online.Version() != s.prof.saved {
		_ = s.saveProfiles(s.now())
	}
}

// Profiles returns the learned throughputs (api.ProfileOnline) and, with
// prerun, the pre-run matrix's points too (api.ProfilePreRun).
func (s *Scheduler) Profiles(prerun bool) []api.ProfileEntry {
	s.mu.Lock()
	out := []api.ProfileEntry{}
	for _, e := range s.prof.online.State().Entries {
		out = append(out, api.ProfileEntry{Model: e.Model, GPUType: e.GPUType, GPUs: e.GPUs,
			StepsPerS: e.Rate, Samples: e.Samples, Source: api.ProfileOnline})
	}
	base := s.prof.base
	s.mu.Unlock()
	if prerun {
		for _, m := range base.Models {
			for _, t := range base.Types {
				for _, p := range base.Points(m, t) {
					out = append(out, api.ProfileEntry{Model: m, GPUType: t, GPUs: p.GPUs,
						StepsPerS: p.Rate, Source: api.ProfilePreRun})
				}
			}
		}
	}
	return out
}
