package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// recorder is an Applier that records what it is asked to do instead of
// doing it (the Nomad harness pattern); failAt makes the call with that
// label fail.
type recorder struct {
	calls  []string
	failAt string
}

func (r *recorder) note(kind string, j *model.Job, n int) error {
	label := fmt.Sprintf("%s %s", kind, j.Spec.ID)
	if n >= 0 {
		label += fmt.Sprintf(" →%d", n)
	}
	r.calls = append(r.calls, label)
	if label == r.failAt {
		return errors.New("refused")
	}
	return nil
}

func (r *recorder) Update(u Update) error      { return r.note("update", u.Job, -1) }
func (r *recorder) Reject(x Rejection) error   { return r.note("reject", x.Job, -1) }
func (r *recorder) Preempt(j *model.Job) error { return r.note("preempt", j, -1) }
func (r *recorder) Resize(a Assignment) error  { return r.note("resize", a.Job, len(a.GPUs)) }
func (r *recorder) Migrate(a Assignment) error { return r.note("migrate", a.Job, len(a.GPUs)) }
func (r *recorder) Start(a Assignment) error   { return r.note("start", a.Job, len(a.GPUs)) }

// applyPlan is a plan with every kind of entry, listed out of the
// canonical order: G grows from 1 to 3 GPUs, S shrinks from 4 to 2.
func applyPlan() Plan {
	job := func(id string, held int) *model.Job {
		j := model.NewJob(model.JobSpec{ID: id}, 0, -1, 1)
		j.Alloc = make([]model.GPU, held)
		return j
	}
	gpus := func(n int) []model.GPU { return make([]model.GPU, n) }
	return Plan{
		Start:   []Assignment{{Job: job("N1", 0), GPUs: gpus(2)}, {Job: job("N2", 0), GPUs: gpus(1)}},
		Resize:  []Assignment{{Job: job("G", 1), GPUs: gpus(3)}, {Job: job("S", 4), GPUs: gpus(2)}},
		Migrate: []Assignment{{Job: job("M", 2), GPUs: gpus(2)}},
		Preempt: []*model.Job{job("P", 1)},
		Reject:  []Rejection{{Job: job("R", 0), Reason: "too big"}},
		Updates: []Update{{Job: job("U", 1), Queue: 1}},
	}
}

// TestApplyOrder: updates, rejections, preemptions, shrinking resizes,
// migrations, growing resizes, starts — whatever order the plan lists
// them in.
func TestApplyOrder(t *testing.T) {
	var r recorder
	if err := Apply(applyPlan(), &r); err != nil {
		t.Fatal(err)
	}
	want := []string{"update U", "reject R", "preempt P", "resize S →2", "migrate M →2", "resize G →3", "start N1 →2", "start N2 →1"}
	if !slices.Equal(r.calls, want) {
		t.Errorf("calls %q\nwant  %q", r.calls, want)
	}
}

// TestApplyStopsAtError: the first error stops the plan and names its step.
func TestApplyStopsAtError(t *testing.T) {
	r := recorder{failAt: "migrate M →2"}
	err := Apply(applyPlan(), &r)
	if err == nil || err.Error() != "migrate of M: refused" {
		t.Fatalf("Apply = %v, want \"migrate of M: refused\"", err)
	}
	if last := r.calls[len(r.calls)-1]; last != "migrate M →2" || len(r.calls) != 5 {
		t.Errorf("calls %q: want nothing after the failed migration", r.calls)
	}
}

// TestUpdateApply: an update sets the job's queue and, when it says so,
// resets its attained service at now.
func TestUpdateApply(t *testing.T) {
	j := model.NewJob(model.JobSpec{ID: "j"}, 0, -1, 1)
	j.Periods = []model.Period{{Start: 0, End: 10}}
	Update{Job: j, Queue: 1}.Apply(50)
	if j.Queue != 1 || len(j.Periods) != 1 {
		t.Errorf("queue %d, %d periods after a plain update", j.Queue, len(j.Periods))
	}
	Update{Job: j, Queue: 0, Reset: true}.Apply(60)
	if j.Queue != 0 || len(j.Periods) != 0 || j.ResetAt != 60 {
		t.Errorf("queue %d, %d periods, reset at %d after a reset", j.Queue, len(j.Periods), j.ResetAt)
	}
}
