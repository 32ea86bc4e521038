package learn

import (
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/forecast"
	"github.com/gpusched/gpusched/service/jobs"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/nodes"
)

// Table is online learning over the scheduler's job table (package jobs):
// the hooks its loop calls as jobs report progress, start and end, and
// forecast.World, what the forecasts read. Its methods are called with
// the scheduler's lock held. Prof and ETA are set once they are loaded.
type Table struct {
	T    *jobs.Table
	Prof *Profiles
	ETA  *ETA
	// Clock is the scheduler's clock; Seq its latest sequence number.
	Clock func() time.Time
	Seq   func() int64
	// Names and Options build the forecasts' engine (Options for the
	// model's cluster); None says why there is nothing to forecast on.
	Names   recipe.Names
	Options func(*model.Cluster) recipe.Options
	None    string
}

// Observe learns from a new progress report (steps at at) of active job
// cur, as its record was before the report: the profiles from a running
// job that is not being stopped, the job's series from a running one.
func (l *Table) Observe(cur *ledger.Record, steps int64, at time.Time) {
	if cur.State != api.Running || cur.Stopping != "" {
		l.Prof.Forget(cur.ID)
	} else {
		l.Prof.ObserveProgress(Progress{Job: cur.ID, Model: cur.Model, GPUType: nodes.JobGPUType(cur, l.T.Nodes),
			Attempt: cur.Attempt, Generation: cur.Generation, GPUs: cur.LiveGPUs(), Steps: steps, At: at})
	}
	if cur.State == api.Running {
		l.ETA.Series.Progress(cur.ID, cur.Attempt, cur.Generation, steps, at)
	}
}

// Rate returns the latest measured steps/s of running job id (0 when none
// is known).
func (l *Table) Rate(id string) float64 {
	if l.Prof == nil {
		return 0
	}
	return l.Prof.Rate(id)
}

// TickProfiles runs every round tick (Profiles.Tick over the active
// jobs): it reports whether a rebuild of the matrix waits for the next
// round.
func (l *Table) TickProfiles(now time.Time) bool {
	return l.Prof.Tick(now, func(id string) bool { return l.T.Active[id] != nil })
}

// Started records, as job j starts at now, the outcomes of the predictions
// served while it waited and its length as estimated now (the base of what
// its run time will teach); call it after the start is applied.
func (l *Table) Started(j *jobs.Job, now time.Time) {
	l.ETA.Started(j.Rec.ID, now)
	if tab, ok := l.T.ProfileTable(); ok && j.Model != nil {
		if fj, ok := forecast.JobOf(l.live(j), tab, l.T.Cluster, l.ETA.History(), now); ok {
			l.ETA.Estimate(j.Rec.ID, fj.Length, now)
		}
	}
}

// Ended learns from job j, which stopped running at now in state st; call
// it after the record is applied.
func (l *Table) Ended(j *jobs.Job, st api.State, now time.Time) {
	l.ETA.Ended(j.Rec.ID, j.Rec.User, j.Rec.StartedAt, st, now)
}

// TickETA writes what the forecasts learned (with force, all of it).
func (l *Table) TickETA(now time.Time, force bool) {
	l.ETA.Tick(now, force, func(id string) bool {
		j := l.T.Jobs[id]
		return j == nil || j.Rec.State.Final()
	})
}

// Replicas returns the current replicas of job id (false: no such job),
// for the Room's series.
func (l *Table) Replicas(id string) ([]ledger.Replica, bool) {
	if j := l.T.Jobs[id]; j != nil {
		return j.Rec.Replicas, true
	}
	return nil, false
}

// Now implements forecast.World.
func (l *Table) Now() time.Time { return l.Clock() }

// Job implements forecast.World.
func (l *Table) Job(id string) (*ledger.Record, bool) {
	if j := l.T.Jobs[id]; j != nil {
		return &j.Rec, true
	}
	return nil, false
}

// Jobs implements forecast.World: the active jobs, oldest first.
func (l *Table) Jobs() []forecast.Live {
	list := jobs.BySeq(l.T.Active)
	out := make([]forecast.Live, len(list))
	for i, j := range list {
		out[i] = l.live(j)
	}
	return out
}

// live returns active job j as forecasts read it.
func (l *Table) live(j *jobs.Job) forecast.Live {
	rate, reports := l.ETA.Series.MeasuredRate(j.Rec.ID, j.Rec.Attempt, j.Rec.Generation)
	return forecast.Live{Rec: &j.Rec, Job: j.Model, Seq: j.Seq, Rate: rate, Reports: reports}
}

// Key implements forecast.World.
func (l *Table) Key(live []forecast.Live) (uint64, any) {
	return forecast.Key(l.Seq(), live, forecast.LiveNodes(l.T.Nodes)), l.T.State
}

// Inputs implements forecast.World.
func (l *Table) Inputs(now time.Time) forecast.Inputs {
	in := forecast.Inputs{Now: now, History: l.ETA.History(), Names: l.Names, None: l.None}
	if tab, ok := l.T.ProfileTable(); ok {
		in.Cluster, in.Table, in.Options = l.T.Cluster, tab, l.Options(l.T.Cluster)
	}
	return in
}

// Estimate implements forecast.World.
func (l *Table) Estimate(id string, n forecast.Length, now time.Time) { l.ETA.Estimate(id, n, now) }

// Predict implements forecast.World.
func (l *Table) Predict(id string, p forecast.Prediction) { l.ETA.Predict(id, p) }
