package kube

import (
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/gpusched/gpusched/core/model"
)

// TestProgressAnnotations: a running job's pods report steps and
// checkpoints in their annotations. The newest checkpoint becomes the
// model job's (checkpoint-aware victims); two step counts of one
// execution at least 10 s apart give an online throughput sample for
// (model, GPU type, GPUs), as in the service; a malformed annotation is
// reported, not fatal.
func TestProgressAnnotations(t *testing.T) {
	s := testSched(t, "fifo", "pack")
	model0 := "ResNet-50 (batch size 64)"
	pods := func(steps int, ckpt time.Time, bad bool) []any {
		var out []any
		for k := range 2 {
			p := mkPod("w-"+strconv.Itoa(k), 4, gang("w", 2))
			p.Spec.NodeName = "a"
			p.Annotations[AnnModel] = model0
			if steps >= 0 {
				p.Annotations[AnnSteps] = strconv.Itoa(steps - k) // rank 1 lags a step
			}
			if !ckpt.IsZero() && k == 1 {
				p.Annotations[AnnLastCheckpoint] = ckpt.Format(time.RFC3339Nano)
				p.Annotations[AnnCheckpointSteps] = "90"
			}
			if bad {
				p.Annotations[AnnSteps] = "many"
			}
			out = append(out, p)
		}
		return out
	}
	objs := append([]any{mkNode("a", "Tesla-V100-SXM2-16GB", 8)}, pods(-1, time.Time{}, false)...)
	_, _ = feed(t, s, t0, objs...) // the job runs (gpusched found it bound)
	set := func(now time.Time, objs []any) {
		s.w.mu.Lock()
		defer s.w.mu.Unlock()
		for _, o := range objs {
			sp, _ := stripPod(o.(*v1.Pod))
			kj, _ := s.w.setPod(sp.(*v1.Pod), now)
			s.progress(kj, s.w.pods[sp.(*v1.Pod).UID], now)
		}
	}
	ckpt := t0.Add(3 * time.Second)
	set(t0.Add(5*time.Second), pods(100, ckpt, false))
	kj := s.w.jobs["ns/label/w"]
	if kj.mj.Checkpoint != model.Time(ckpt.UnixMilli()) || kj.ckptSteps != 90 {
		t.Fatalf("checkpoint %d (%d steps), want %d", kj.mj.Checkpoint, kj.ckptSteps, ckpt.UnixMilli())
	}
	set(t0.Add(10*time.Second), pods(150, time.Time{}, false)) // 5 s later: too soon for a sample
	if s.prof.online.Len() != 0 {
		t.Fatal("a sample from reports 5 s apart")
	}
	set(t0.Add(17*time.Second), pods(340, time.Time{}, false))
	st := s.prof.online.State()
	if len(st.Entries) != 1 {
		t.Fatalf("online profile: %+v", st)
	}
	e := st.Entries[0]
	if e.Model != model0 || e.GPUType != "v100" || e.GPUs != 8 || e.Rate != 20 {
		t.Errorf("sample %+v, want 240 steps in 12 s = 20 steps/s on 8 v100", e)
	}
	set(t0.Add(18*time.Second), pods(0, time.Time{}, true))
	if p := s.w.pods["w-0"]; p.progressErr != `annotation gpusched.io/steps="many": want a whole number of steps` {
		t.Errorf("malformed progress: %q", p.progressErr)
	}
	s.tickProfiles(t0.Add(19 * time.Second))
	if s.matrix == s.prof.base {
		t.Error("the learned estimate did not reach the matrix")
	}
}
