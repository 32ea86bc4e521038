package policy_test

import (
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/policy"
)

// hlasState: one type "a" rated 2 TFLOPS, 4 GPUs on one node.
func hlasState(t *testing.T) *model.State {
	t.Helper()
	c, err := model.NewCluster([]model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 2}}, []model.Node{{Name: "n0", GPUs: 4}})
	if err != nil {
		t.Fatal(err)
	}
	return model.NewState(c, perGPU{})
}

// ran adds a job that has run ranSec seconds on one GPU (a closed period).
func ran(t *testing.T, s *model.State, id string, seq int, ranSec model.Time, running bool, queue int) *model.Job {
	t.Helper()
	j := model.NewJob(model.JobSpec{ID: id, Submit: model.Time(seq), GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, seq, -1, 1e9)
	j.Queue = queue
	if ranSec > 0 {
		j.Periods = []model.Period{{Start: 0, End: ranSec * model.Second, Type: 0, GPUs: 1}}
	}
	s.Submit(j)
	if running {
		if err := s.Start(j, []model.GPU{{Node: 0, Index: int32(seq)}}); err != nil {
			t.Fatal(err)
		}
		j.LastStart = 100 * model.Second // the open period starts at "now"
	}
	return j
}

func updates(us []engine.Update) []string {
	var out []string
	for _, u := range us {
		s := u.Job.Spec.ID + "→Q1"
		if u.Queue == policy.Q2 {
			s = u.Job.Spec.ID + "→Q2"
		}
		if u.Reset {
			s += "+reset"
		}
		out = append(out, s)
	}
	return out
}

// TestHLASDemotion: A has P = 10 s × 1 GPU × 2 TFLOPS = 20, B has P = 60;
// avg = 40. With ratio 1.5 the limit is 60 and B (not above it) stays; with
// 1.49 the limit is 59.6 and B is stopped and moved to Q2 (seed 003, S1).
func TestHLASDemotion(t *testing.T) {
	for _, tc := range []struct {
		ratio   float64
		stopped []string
		updates []string
	}{{1.5, nil, nil}, {1.49, []string{"B"}, []string{"B→Q2"}}} {
		s := hlasState(t)
		ran(t, s, "A", 0, 10, true, policy.Q1)
		ran(t, s, "B", 1, 30, true, policy.Q1)
		h := &policy.HLAS{PriorityRatio: tc.ratio, StarveRatio: 2}
		ord := h.Order(s, 100*model.Second, nil)
		if got := ids(ord.Stop); !slices.Equal(got, tc.stopped) {
			t.Errorf("ratio %v: stopped %v, want %v", tc.ratio, got, tc.stopped)
		}
		if got := updates(ord.Updates); !slices.Equal(got, tc.updates) {
			t.Errorf("ratio %v: updates %v, want %v", tc.ratio, got, tc.updates)
		}
	}
}

// TestHLASStarvation: W ran 10 s, was demoted to Q2 and has waited since
// t=10 s. At t=30 s its waiting/running ratio is 20/10 = 2, not above 2; at
// t=31 s it is 2.1: W returns to Q1 with its history reset (P = 0), ahead of
// the Q1 job V that has P = 2·1·2 = 4 (seed 003, S2 and S3).
func TestHLASStarvation(t *testing.T) {
	for _, tc := range []struct {
		now     model.Time
		order   []string
		updates []string
	}{
		{30 * model.Second, []string{"V", "W"}, nil},
		{31 * model.Second, []string{"W", "V"}, []string{"W→Q1+reset"}},
	} {
		s := hlasState(t)
		w := ran(t, s, "W", 0, 10, false, policy.Q2)
		w.Queued = 10 * model.Second
		ran(t, s, "V", 1, 2, false, policy.Q1)
		ord := (&policy.HLAS{PriorityRatio: 1.5, StarveRatio: 2}).Order(s, tc.now, nil)
		if got := ids(ord.Jobs); !slices.Equal(got, tc.order) {
			t.Errorf("t=%v: order %v, want %v", tc.now, got, tc.order)
		}
		if got := updates(ord.Updates); !slices.Equal(got, tc.updates) {
			t.Errorf("t=%v: updates %v, want %v", tc.now, got, tc.updates)
		}
	}
}

// TestHLASOrder: Q1 by attained service then submit time, Q2 after Q1; LAS
// weighs every type 1.
func TestHLASOrder(t *testing.T) {
	s := hlasState(t)
	ran(t, s, "q2", 0, 1, false, policy.Q2)
	ran(t, s, "old", 1, 5, false, policy.Q1)
	ran(t, s, "new1", 2, 0, false, policy.Q1)
	ran(t, s, "new2", 3, 0, false, policy.Q1)
	ord := (&policy.HLAS{PriorityRatio: 1.5, StarveRatio: 100}).Order(s, 0, nil)
	if got := ids(ord.Jobs); !slices.Equal(got, []string{"new1", "new2", "old", "q2"}) || !ord.Backfill || ord.Preemptive {
		t.Errorf("order %v backfill %v preemptive %v", got, ord.Backfill, ord.Preemptive)
	}
	if (&policy.HLAS{Blind: true}).Name() != "las" || (&policy.HLAS{}).Name() != "hlas" {
		t.Error("names")
	}
}
