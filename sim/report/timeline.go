package report

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/sim/eventlog"
	"github.com/gpusched/gpusched/sim/metrics"
)

// DefaultTimelines is how many jobs' timelines a report shows when none are
// named: the jobs with the longest JCTs and those stopped or resized most.
const DefaultTimelines = 8

// Timeline is one job's history in a run, for the HTML report.
type Timeline struct {
	Job    string          `json:"job"`
	Events []TimelineEvent `json:"events"`
}

// TimelineEvent is one event of a job: its time in seconds, its kind
// (submit, start, resize, preempt, finish, reject, unfinished), the GPUs
// it holds after it, and a reason (a migration, a rejection).
type TimelineEvent struct {
	T      float64 `json:"t"`
	Kind   string  `json:"kind"`
	GPUs   int     `json:"gpus,omitempty"`
	Reason string  `json:"reason,omitempty"`
}

// TimelineSink keeps the history of every job from a run's event log, to
// pick the timelines of a report afterwards; it passes every event on to
// next (when not nil). It implements sim.Sink.
type TimelineSink struct {
	next  interface{ Emit(eventlog.Event) }
	index map[string]int
	jobs  [][]TimelineEvent
}

// NewTimelineSink returns a sink that keeps job histories and forwards to
// next.
func NewTimelineSink(next interface{ Emit(eventlog.Event) }) *TimelineSink {
	return &TimelineSink{next: next, index: map[string]int{}}
}

// Emit records e and forwards it.
func (s *TimelineSink) Emit(e eventlog.Event) {
	if s.next != nil {
		s.next.Emit(e)
	}
	if e.Job == "" || e.Kind == eventlog.Pause {
		return
	}
	i, ok := s.index[e.Job]
	if !ok {
		i = len(s.jobs)
		s.index[e.Job] = i
		s.jobs = append(s.jobs, nil)
	}
	te := TimelineEvent{T: e.T.Seconds(), Kind: string(e.Kind), GPUs: len(e.Alloc), Reason: e.Reason}
	s.jobs[i] = append(s.jobs[i], te)
}

// Timelines returns the histories of the jobs named in ids (those the run
// has, in order) or, with no ids, of up to n jobs: alternately the longest
// JCTs and the most preemptions plus resizes, each job once.
func (s *TimelineSink) Timelines(recs []metrics.JobRecord, ids []string, n int) []Timeline {
	if len(ids) == 0 {
		ids = pickJobs(recs, n)
	}
	var out []Timeline
	for _, id := range ids {
		if i, ok := s.index[id]; ok {
			out = append(out, Timeline{Job: id, Events: s.jobs[i]})
		}
	}
	return out
}

// pickJobs returns up to n job IDs: alternately the next longest JCT and
// the next most stopped or resized job (ties by trace order).
func pickJobs(recs []metrics.JobRecord, n int) []string {
	byJCT := make([]int, 0, len(recs))
	byMoves := make([]int, 0, len(recs))
	for i := range recs {
		if recs[i].Completed() {
			byJCT = append(byJCT, i)
		}
		if recs[i].Preemptions+recs[i].Resizes > 0 {
			byMoves = append(byMoves, i)
		}
	}
	slices.SortStableFunc(byJCT, func(a, b int) int { return cmp.Compare(recs[b].JCT(), recs[a].JCT()) })
	moves := func(i int) int { return recs[i].Preemptions + recs[i].Resizes }
	slices.SortStableFunc(byMoves, func(a, b int) int { return cmp.Compare(moves(b), moves(a)) })
	seen := map[int]bool{}
	var out []string
	for k := 0; len(out) < n && (k < len(byJCT) || k < len(byMoves)); k++ {
		for _, list := range [][]int{byJCT, byMoves} {
			if k < len(list) && !seen[list[k]] && len(out) < n {
				seen[list[k]] = true
				out = append(out, recs[list[k]].ID)
			}
		}
	}
	return out
}
