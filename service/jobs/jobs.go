package jobs

import (
	"cmp"
	"maps"
	"math/bits"
	"slices"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/nodes"
)

// Job is one job as the scheduler keeps it in memory.
type Job struct {
	// Rec is the job's durable record (package ledger).
	Rec ledger.Record
	// Seq is the job's sequence number: the order of submission.
	Seq int
	// Model is the job in the scheduling model, nil once the job is final.
	Model *model.Job
	// WaitReason explains why a queued job did not start in round
	// WaitRound; not persisted. In other rounds the round's default reason
	// applies (Table.WaitDefault).
	WaitReason string
	WaitRound  int64
	// PauseRound is the latest round in which the placer paused the job.
	PauseRound int64
	// ProgressSaved is when the record with the job's progress was last
	// written; plain progress newer than that is in Rec only (not
	// persisted yet) while the job is in Table.Unsaved.
	ProgressSaved time.Time
}

// Table is the scheduler's in-memory state: its jobs and nodes and the
// scheduling model built from them. Its owner serializes every use.
type Table struct {
	// Jobs holds every job kept, Active those that are not final.
	Jobs   map[string]*Job
	Active map[string]*Job
	// Nodes holds every known node.
	Nodes map[string]*nodes.Node
	// Cluster and State are the scheduling model of the ready nodes (nil:
	// not built); NodeIdx maps node names to cluster node indices.
	Cluster *model.Cluster
	State   *model.State
	NodeIdx map[string]int
	// Rounds counts the rounds that ran the engine; WaitDefault is the
	// wait reason of queued jobs the last round's trace does not mention.
	Rounds      int64
	WaitDefault string
	// Unsaved holds the jobs whose latest plain progress is in memory only.
	Unsaved map[*Job]bool
}

// NewTable returns an empty table whose queued jobs wait for waitDefault.
func NewTable(waitDefault string) Table {
	return Table{Jobs: map[string]*Job{}, Active: map[string]*Job{}, Nodes: map[string]*nodes.Node{},
		WaitDefault: waitDefault, Unsaved: map[*Job]bool{}}
}

// BySeq returns the jobs of m in order of submission.
func BySeq(m map[string]*Job) []*Job {
	list := slices.Collect(maps.Values(m))
	slices.SortFunc(list, func(a, b *Job) int { return cmp.Compare(a.Seq, b.Seq) })
	return list
}

// Paused reports whether job j is paused: waiting, and held back by the
// placer in the latest round.
func (t *Table) Paused(j *Job) bool {
	st := j.Rec.State
	return j.PauseRound == t.Rounds && t.Rounds > 0 && (st == api.Queued || st == api.Preempted)
}

// ViewState is the state a job shows: its record's, or paused.
func (t *Table) ViewState(j *Job) api.State {
	if t.Paused(j) {
		return api.Paused
	}
	return j.Rec.State
}

// View returns job j as the API shows it, with its events when asked: a
// waiting job's reason says why it waits (its own reason of the latest
// round, else the round's default).
func (t *Table) View(j *Job, events bool) api.Job {
	out := j.Rec.Job
	if out.Alloc == nil {
		out.Alloc = []string{}
	}
	if !events {
		out.Events = nil
	}
	out.State = t.ViewState(j)
	w := t.WaitDefault
	if j.WaitRound == t.Rounds && j.WaitReason != "" {
		w = j.WaitReason
	}
	if w != "" && (out.State == api.Queued || out.State == api.Preempted || out.State == api.Paused) {
		if out.Reason == "" {
			out.Reason = w
		} else {
			out.Reason += "; " + w
		}
	}
	return out
}

// UsedGPUs returns the GPUs of node name that jobs hold.
func (t *Table) UsedGPUs(name string) int {
	i, ok := t.NodeIdx[name]
	if !ok || t.State == nil {
		return 0
	}
	return t.Cluster.Nodes[i].GPUs - bits.OnesCount64(t.State.FreeMask(i))
}

// ProfileTable returns the model's profile table (false: no model, or
// one without a table).
func (t *Table) ProfileTable() (*profile.Table, bool) {
	if t.State == nil {
		return nil, false
	}
	p, ok := t.State.Profile.(*profile.Table)
	return p, ok
}

// StateCounts returns the number of jobs in each state they show, every
// state of api.States counted (0 when none).
func (t *Table) StateCounts() map[api.State]int {
	n := map[api.State]int{}
	for _, st := range api.States() {
		n[st] = 0
	}
	for _, j := range t.Jobs {
		n[t.ViewState(j)]++
	}
	return n
}

// EndedBefore returns the jobs that ended before cutoff, in order of
// submission.
func (t *Table) EndedBefore(cutoff time.Time) []*Job {
	var old []*Job
	for _, j := range t.Jobs {
		if j.Rec.State.Final() && j.Rec.EndedAt().Before(cutoff) {
			old = append(old, j)
		}
	}
	slices.SortFunc(old, func(a, b *Job) int { return cmp.Compare(a.Seq, b.Seq) })
	return old
}

// Models returns the active jobs as the scheduling model holds them.
func (t *Table) Models() []*model.Job {
	out := make([]*model.Job, 0, len(t.Active))
	for _, j := range t.Active {
		out = append(out, j.Model)
	}
	return out
}

// NodeList returns the known nodes in order of name.
func (t *Table) NodeList() []*nodes.Node {
	out := make([]*nodes.Node, 0, len(t.Nodes))
	for _, name := range slices.Sorted(maps.Keys(t.Nodes)) {
		out = append(out, t.Nodes[name])
	}
	return out
}
