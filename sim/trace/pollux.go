package trace

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/gpusched/gpusched/core/model"
)

// Pollux's columns, in order.
const (
	polluxColName = iota
	polluxColTime
	polluxColApp
	polluxColReplicas
	polluxColBatch
	polluxColumns
)

// readPollux reads a Pollux workload CSV (header polluxHeader) and gives
// every job the duration its application needs at its replica count and
// batch size (see polluxProfile.duration) and its scaling curve at that
// batch size (see polluxProfile.scaling).
func readPollux(r io.Reader, name string) ([]model.JobSpec, error) {
	cache := newPolluxCache()
	jobs, lines, err := readSpecs(r, name, polluxHeader, ',', polluxColumns, func(l *lines, cols [][]byte) (model.JobSpec, error) {
		return polluxJob(l, cols, cache)
	})
	if err != nil {
		return nil, err
	}
	return finish(name, jobs, lines)
}

// polluxJob converts the columns of one Pollux line, loading the
// application's profile and scaling curve into cache on first use.
func polluxJob(l *lines, cols [][]byte, cache *polluxCache) (model.JobSpec, error) {
	var spec model.JobSpec
	var err error
	if spec.ID, err = l.nonEmpty("name", cols[polluxColName]); err != nil {
		return spec, err
	}
	if spec.Submit, err = l.seconds("time", cols[polluxColTime]); err != nil {
		return spec, err
	}
	if spec.Model, err = l.nonEmpty("application", cols[polluxColApp]); err != nil {
		return spec, err
	}
	if spec.GPUs, err = l.gpus("num_replicas", cols[polluxColReplicas]); err != nil {
		return spec, err
	}
	spec.MinGPUs, spec.MaxGPUs = spec.GPUs, spec.GPUs
	batch, err := l.integer("batch_size", cols[polluxColBatch], 1, maxGPUs*maxGPUs)
	if err != nil {
		return spec, err
	}
	p, err := cache.profile(spec.Model)
	if err != nil {
		return spec, l.fail("%v", err)
	}
	secs, err := p.duration(spec.GPUs, int(batch))
	if err != nil {
		return spec, l.fail("%s: %v", spec.Model, err)
	}
	spec.Duration = atLeastOneMilli(model.FromSeconds(secs))
	spec.Scaling = cache.curve(spec.Model, p, int(batch))
	return spec, nil
}

// duration returns the seconds a job of the profile's application takes at
// the given replica count and global batch size, as Pollux's workload
// generator estimates it (Application.get_configurations in
// simulator/applications.py):
//
//	local  = ⌈batch / replicas⌉                 per-GPU batch
//	accum  = ⌈local / maxLocal⌉ - 1             gradient-accumulation steps
//	atomic = ⌈local / (accum + 1)⌉              per-GPU batch of one pass
//	step, sync = step time of atomic on the packed placement
//	step  += accum × (step - sync)
//	duration = iterations(batch) × step
func (p *polluxProfile) duration(replicas, batch int) (float64, error) {
	local := ceilDiv(batch, replicas)
	accum := ceilDiv(local, p.maxLocal) - 1
	atomic := ceilDiv(local, accum+1)
	if atomic < p.minLocal {
		return 0, fmt.Errorf("batch_size %d on %d replicas is %d per GPU, less than the smallest profiled %d",
			batch, replicas, atomic, p.minLocal)
	}
	step, sync, err := p.stepTime(replicas, atomic)
	if err != nil {
		return 0, err
	}
	step += float64(accum) * (step - sync)
	iters, err := p.app.iters(batch)
	if err != nil {
		return 0, err
	}
	return iters * step, nil
}

// stepTime returns the step and sync time of one pass at per-GPU batch
// local on replicas packed GPUs: interpolated along the batch size on the
// measured curve for that replica count, or, when there is none, linearly
// between the curves of the nearest measured replica counts around it.
func (p *polluxProfile) stepTime(replicas, local int) (step, sync float64, err error) {
	if pts, ok := p.curves[replicas]; ok {
		return interpolateStep(pts, replicas, local)
	}
	i, _ := slices.BinarySearch(p.replicas, replicas)
	if i == 0 || i == len(p.replicas) {
		return 0, 0, fmt.Errorf("no step time measured near %d replicas (profiled %d to %d)",
			replicas, p.replicas[0], p.replicas[len(p.replicas)-1])
	}
	r0, r1 := p.replicas[i-1], p.replicas[i]
	s0, y0, err := interpolateStep(p.curves[r0], r0, local)
	if err != nil {
		return 0, 0, err
	}
	s1, y1, err := interpolateStep(p.curves[r1], r1, local)
	if err != nil {
		return 0, 0, err
	}
	w := float64(replicas-r0) / float64(r1-r0)
	return s0 + w*(s1-s0), y0 + w*(y1-y0), nil
}

// interpolateStep interpolates linearly between the points (sorted by batch
// size) around local.
func interpolateStep(pts []stepPoint, replicas, local int) (step, sync float64, err error) {
	x := float64(local)
	first, last := pts[0], pts[len(pts)-1]
	if x < first.bsz || x > last.bsz {
		return 0, 0, fmt.Errorf("per-GPU batch %d on %d replicas is outside the profiled %g to %g",
			local, replicas, first.bsz, last.bsz)
	}
	i, found := slices.BinarySearchFunc(pts, x, func(p stepPoint, x float64) int {
		return cmp.Compare(p.bsz, x)
	})
	if found {
		return pts[i].step, pts[i].sync, nil
	}
	a, b := pts[i-1], pts[i]
	w := (x - a.bsz) / (b.bsz - a.bsz)
	return a.step + w*(b.step-a.step), a.sync + w*(b.sync-a.sync), nil
}

// iters returns the iterations a job needs at global batch size batch:
// the validated count, or the linear interpolation between the validated
// batch sizes around it (Application.get_iteration).
func (a polluxApp) iters(batch int) (float64, error) {
	pts := a.iterations
	first, last := pts[0], pts[len(pts)-1]
	if batch < first.batch || batch > last.batch {
		return 0, fmt.Errorf("batch_size %d is outside the validated %d to %d", batch, first.batch, last.batch)
	}
	for i := 1; i < len(pts); i++ {
		if batch <= pts[i].batch {
			lo, hi := pts[i-1], pts[i]
			if batch == lo.batch {
				return lo.iters, nil
			}
			w := float64(batch-lo.batch) / float64(hi.batch-lo.batch)
			return lo.iters + w*(hi.iters-lo.iters), nil
		}
	}
	return first.iters, nil // a single validated batch size
}
