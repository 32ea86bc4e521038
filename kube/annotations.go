package kube

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpusched/gpusched/config"
)

// settingKeys are the annotations that configure a job, in the order
// errors are reported.
func settingKeys() []string {
	return []string{AnnMinReplicas, AnnMaxReplicas, AnnModel, AnnPriority, AnnGPUType}
}

// settings are a job's gpusched.io/ settings.
type settings struct {
	// minReplicas is the gang size; 0 means the default (jobs.go).
	minReplicas int
	// maxReplicas is an elastic job's maximum; 0 means the default
	// (elastic.go).
	maxReplicas int
	model       string
	priority    int
	// gpuType is the GPU type the job must run on ("" any), normalised
	// like node products (config.TypeFromName).
	gpuType string
}

// AnnotationError is a malformed gpusched.io/ annotation.
type AnnotationError struct {
	Key, Value, Want string
}

// Error names the annotation, its value and what it should be.
func (e *AnnotationError) Error() string {
	return fmt.Sprintf("annotation %s=%q: %s", e.Key, e.Value, e.Want)
}

// maxMinReplicas bounds gpusched.io/min-replicas (a gang larger than any
// cluster is a typo).
const maxMinReplicas = 100000

// parseSettings reads the job settings of merged annotations ann (the
// owner's, overridden by the pod's).
func parseSettings(ann map[string]string) (settings, error) {
	var s settings
	if v, ok := ann[AnnMinReplicas]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > maxMinReplicas {
			return s, &AnnotationError{AnnMinReplicas, v, fmt.Sprintf("want a whole number of pods from 1 to %d", maxMinReplicas)}
		}
		s.minReplicas = n
	}
	if v, ok := ann[AnnMaxReplicas]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > maxMinReplicas || n < s.minReplicas {
			return s, &AnnotationError{AnnMaxReplicas, v, fmt.Sprintf("want a whole number of pods from 1 (and %s) to %d", AnnMinReplicas, maxMinReplicas)}
		}
		s.maxReplicas = n
	}
	if v, ok := ann[AnnModel]; ok {
		if strings.TrimSpace(v) == "" {
			return s, &AnnotationError{AnnModel, v, "want the job type's name in the throughput matrix, e.g. \"ResNet-50 (batch size 64)\""}
		}
		s.model = v
	}
	if v, ok := ann[AnnPriority]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return s, &AnnotationError{AnnPriority, v, "want an integer (higher runs first)"}
		}
		s.priority = n
	}
	if v, ok := ann[AnnGPUType]; ok {
		if strings.TrimSpace(v) == "" {
			return s, &AnnotationError{AnnGPUType, v, "want a GPU type, e.g. v100 or Tesla-V100-SXM2-16GB"}
		}
		s.gpuType = config.TypeFromName(v)
	}
	return s, nil
}

// progressReport is the progress a pod reports in its annotations.
type progressReport struct {
	steps    int64
	hasSteps bool
	// ckptSteps and ckptAt: a checkpoint of ckptSteps written at ckptAt.
	ckptSteps int64
	ckptAt    time.Time
	hasCkpt   bool
}

// parseProgress reads the progress annotations of a pod. A malformed one
// is an *AnnotationError; the others are still read.
func parseProgress(ann map[string]string) (progressReport, error) {
	var r progressReport
	var first error
	note := func(err error) {
		if first == nil {
			first = err
		}
	}
	if v, ok := ann[AnnSteps]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 {
			r.steps, r.hasSteps = n, true
		} else {
			note(&AnnotationError{AnnSteps, v, "want a whole number of steps"})
		}
	}
	if v, ok := ann[AnnLastCheckpoint]; ok {
		if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v)); err == nil {
			r.ckptAt, r.hasCkpt = t, true
		} else {
			note(&AnnotationError{AnnLastCheckpoint, v, "want an RFC 3339 time, e.g. 2026-11-25T16:04:05Z"})
		}
	}
	if v, ok := ann[AnnCheckpointSteps]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 {
			r.ckptSteps = n
		} else {
			note(&AnnotationError{AnnCheckpointSteps, v, "want a whole number of steps"})
		}
	}
	return r, first
}
