package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/profile"
)

// Online profiles, as in the service (docs/PROFILES.md): two progress
// reports of one execution of a job with a model, at least
// profile.MarkMinGap apart, give a measured steps/s for (model, GPU type,
// GPU count); the matrix the engine uses is the embedded one with the
// estimates laid over it, rebuilt at once for a new entry and at most
// every profile.RebuildEvery otherwise. The Kubernetes mode keeps the
// estimates in memory: a restarted or new leader learns them again.

// profiles is the scheduler's online profiler; guarded by world.mu.
type profiles struct {
	base     *profile.Matrix
	online   *profile.Online
	rebuilds profile.Rebuilds
}

// progress reads the progress annotations of pod pi of job kj (world.mu
// held): the job's checkpoint is the newest of its pods', its steps the
// most any of its bound pods reports. Times ahead of the scheduler's clock
// count as now.
func (s *Scheduler) progress(kj *kjob, pi *podInfo, now time.Time) {
	rep, err := parseProgress(pi.ann)
	if err != nil && pi.progressErr != err.Error() {
		pi.progressErr = err.Error()
		s.event(pi, v1.EventTypeWarning, "InvalidProgress", err.Error())
	}
	if rep.hasCkpt {
		at := rep.ckptAt
		if at.After(now) {
			at = now
		}
		if at.After(kj.ckpt) {
			kj.ckpt, kj.ckptSteps = at, rep.ckptSteps
			if kj.mj != nil {
				kj.mj.Checkpoint = model.Time(at.UnixMilli())
			}
		}
	}
	if !rep.hasSteps || pi.node == "" {
		return
	}
	steps := rep.steps
	for _, p := range kj.pods {
		if r, err := parseProgress(p.ann); err == nil && r.hasSteps && p.node != "" {
			steps = max(steps, r.steps)
		}
	}
	if steps != kj.mark.Steps || kj.mark.At == 0 {
		s.observe(kj, steps, now)
	}
}

// observe learns from a new step count of job kj at now, like the
// service (profile.Online.Advance): with the job's mark of the same
// execution at least profile.MarkMinGap older it makes a sample. Jobs
// without a model, not running, or on GPUs of several types give none.
func (s *Scheduler) observe(kj *kjob, steps int64, now time.Time) {
	if kj.mj == nil || kj.mj.Spec.Model == "" || !kj.running || kj.stopped || kj.gpuType == "" {
		kj.mark = profile.Mark{}
		return
	}
	m, err := s.prof.online.Advance(kj.mj.Spec.Model, kj.mark,
		profile.Mark{Attempt: kj.attempt, GPUs: kj.boundGPUs, GPUType: kj.gpuType, Steps: steps, At: now.UnixNano()})
	switch {
	case errors.Is(err, profile.ErrSample):
		s.log.Debug("progress sample ignored", "job", jobName(kj.key), "why", err)
	case err != nil:
		s.log.Warn("progress sample", "job", jobName(kj.key), "err", err)
	}
	kj.mark = m
}

// tickProfiles installs a matrix merged with changed estimates: at once
// for a new entry, else at most every profile.RebuildEvery (world.mu
// held).
func (s *Scheduler) tickProfiles(now time.Time) {
	ps := s.prof
	if !ps.rebuilds.Due(ps.online, now.UnixNano()) {
		return
	}
	s.matrix = ps.online.Merge(ps.base)
	s.log.Info("throughput matrix updated from progress reports", "estimates", ps.online.Len())
}

// Progress is a training container's progress report on its own pod
// (`gpusched progress`): its step count, and whether it has just written
// a checkpoint at that step.
type Progress struct {
	Steps      int64
	Checkpoint bool
}

// ReportProgress writes p into the annotations of pod ns/name:
// gpusched.io/steps, and with a checkpoint gpusched.io/checkpoint-steps
// and gpusched.io/last-checkpoint (now, RFC 3339). It needs patch on the
// pod (a Role in the pod's namespace for its service account).
func ReportProgress(ctx context.Context, client kubernetes.Interface, ns, name string, p Progress, now time.Time) error {
	if p.Steps < 0 {
		return fmt.Errorf("progress of pod %s/%s: steps %d: must not be negative", ns, name, p.Steps)
	}
	ann := map[string]string{AnnSteps: strconv.FormatInt(p.Steps, 10)}
	if p.Checkpoint {
		ann[AnnCheckpointSteps] = ann[AnnSteps]
		ann[AnnLastCheckpoint] = now.UTC().Format(time.RFC3339Nano)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		return err
	}
	if _, err := client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("progress of pod %s/%s: %w", ns, name, err)
	}
	return nil
}
