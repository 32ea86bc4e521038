package forecast

import (
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/nodes"
)

// The live side (docs/ETA.md): the service hands its active jobs and
// nodes over as Live and LiveNode values, under its lock; Key fingerprints
// them, so that a forecast runs at most once per change of the jobs or
// nodes, and Take captures the Snapshot that Run simulates forward.

// MaxAge bounds how long a forecast is served while nothing changes
// (measured speeds move, estimates run out).
const MaxAge = 10 * time.Second

// Live is an active job of the service as a forecast reads it.
type Live struct {
	Rec *ledger.Record
	// Job is its model job (nil: none, the job is not forecast) and Seq
	// its order of submission.
	Job *model.Job
	Seq int
	// Rate is its measured steps/s in its current execution (0: not
	// measured yet) and Reports the number of its progress reports there.
	Rate    float64
	Reports int
}

// LiveNode is a node as the forecast's key sees it.
type LiveNode struct {
	Name  string
	Ready bool
	GPUs  int
}

// LiveNodes returns the node table m as the forecasts' key reads it.
func LiveNodes(m map[string]*nodes.Node) []LiveNode {
	out := make([]LiveNode, 0, len(m))
	for name, n := range m {
		out = append(out, LiveNode{Name: name, Ready: n.Ready, GPUs: len(n.GPUs)})
	}
	return out
}

// Key fingerprints what a forecast depends on besides time and the
// measured speeds' small moves: the jobs submitted (submitted counts
// them), every active job's state, attempt, membership, stop and whether
// its speed is measured yet, and the nodes. The order of jobs and nodes
// does not matter.
func Key(submitted int64, jobs []Live, nodes []LiveNode) uint64 {
	key := mix(uint64(submitted))
	for _, j := range jobs { // a sum: the order does not matter
		r := j.Rec
		h := fnv.New64a()
		fmt.Fprintf(h, "%d|%s|%d|%d|%s|%d|%t", j.Seq, r.State, r.Attempt, r.Generation, r.Stopping, len(r.Alloc), j.Rate > 0)
		key += mix(h.Sum64())
	}
	for _, n := range nodes {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s|%t|%d", n.Name, n.Ready, n.GPUs)
		key += mix(h.Sum64())
	}
	return key
}

// mix is SplitMix64's finalizer: it spreads a hash's bits before the sum.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Inputs are what Take reads of the service besides its jobs.
type Inputs struct {
	Now     time.Time
	History *History
	// Names and Options build the engine the service runs.
	Names   recipe.Names
	Options recipe.Options
	// Cluster and Table are the service's model; Table nil: there is
	// nothing to forecast on, for the reason None.
	Cluster *model.Cluster
	Table   *profile.Table
	None    string
}

// Take captures the live state for a forecast at in.Now: the served
// forecast to fill and the snapshot to run (nil without a table: the
// served forecast then says why). jobs are the active jobs, oldest first;
// estimate learns the length of every running job not being stopped.
func Take(in Inputs, jobs []Live, estimate func(id string, l Length)) (*Served, *Snapshot) {
	f := NewServed(in.Now, in.History.Spreads(), [3]string{in.Names.Policy, in.Names.Placer, in.Names.Scaler})
	if in.Table == nil {
		f.None = in.None
		return f, nil
	}
	snap := &Snapshot{Now: model.Time(in.Now.UnixMilli()), Cluster: in.Cluster, Table: in.Table,
		Names: in.Names, Options: in.Options, Jobs: make([]Job, 0, len(jobs))}
	for _, lj := range jobs {
		if lj.Job == nil {
			continue
		}
		fj, ok := JobOf(lj, in.Table, in.Cluster, in.History, in.Now)
		if !ok {
			continue
		}
		fj.Job.Seq = f.Add(lj.Rec.ID, fj.Length)
		snap.Jobs = append(snap.Jobs, fj)
		if lj.Rec.State == api.Running && lj.Rec.Stopping == "" {
			estimate(lj.Rec.ID, fj.Length)
		}
	}
	return f, snap
}

// JobOf returns live job lj (with a model job) as the forecast sees it: a
// copy of its model job and its length; false for a job the model does
// not hold consistently (running in its record, not in the model).
func JobOf(lj Live, tab *profile.Table, c *model.Cluster, h *History, now time.Time) (Job, bool) {
	rec := lj.Rec
	mj := *lj.Job
	mj.Alloc = slices.Clone(lj.Job.Alloc)
	mj.Periods = slices.Clone(lj.Job.Periods)
	mj.Model = tab.ModelIndex(rec.Model)
	running := rec.State == api.Running
	if running != (mj.State == model.Running) || (running && len(mj.Alloc) == 0) {
		return Job{}, false
	}
	fj := Job{Job: &mj}
	if running {
		fj.Started = model.Time(rec.StartedAt.UnixMilli())
	}
	if running && rec.Stopping != "" {
		grace := time.Duration(rec.GracePeriodS) * time.Second
		fj.Length = Length{Kind: KindTimeLimit, Remaining: max(grace, time.Second),
			Detail: fmt.Sprintf("being stopped (%s): its GPUs are free within its grace period of %s", rec.Stopping, grace)}
		return fj, true
	}
	fj.Length = Estimate(facts(lj, tab, c, h, now))
	return fj, true
}

// facts gathers what the service knows of live job lj's length.
func facts(lj Live, tab *profile.Table, c *model.Cluster, h *History, now time.Time) Facts {
	rec := lj.Rec
	f := Facts{TotalSteps: rec.TotalSteps, TimeLimit: time.Duration(rec.TimeLimitS) * time.Second}
	f.UserMedian, f.UserRuns = h.UserMedian(rec.User)
	f.AllMedian, f.AllRuns = h.AllMedian()
	mi := tab.ModelIndex(rec.Model)
	if rec.State != api.Running {
		f.MatrixKnown = mi >= 0
		if rec.LastCheckpointAt != nil {
			f.DoneSteps = rec.CheckpointSteps
		}
		return f
	}
	f.Running = true
	if rec.StartedAt != nil {
		f.Elapsed = now.Sub(*rec.StartedAt)
	}
	f.DoneSteps = rec.ResumeSteps
	if rec.ProgressAt != nil && rec.StartedAt != nil && !rec.ProgressAt.Before(*rec.StartedAt) {
		f.DoneSteps = rec.Steps
	}
	f.MeasuredRate, f.MeasuredReports = lj.Rate, lj.Reports
	if mi >= 0 && lj.Job != nil && len(lj.Job.Alloc) > 0 {
		probe := model.Job{Spec: model.JobSpec{Steps: 1, GPUs: rec.GPUsRequested}, Model: mi}
		f.MatrixRate = tab.Speed(&probe, c.TypeOf(lj.Job.Alloc[0]), len(lj.Job.Alloc))
	}
	return f
}
