package sim

import (
	"math/bits"
	"slices"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/metrics"
)

// newResources starts the measure of the resources besides GPUs on a
// cluster that models them (nil otherwise, which measures nothing): the
// capacity totals and the reference request per GPU of the run's jobs,
// against which stranded GPUs are counted (metrics.Resources).
func newResources(c *model.Cluster, jobs []*model.Job) *metrics.Resources {
	if !c.Vectored() {
		return nil
	}
	names := c.Resources()
	res := &metrics.Resources{Names: slices.Clone(names), Capacity: make([]int64, len(names))}
	for n := range c.Nodes {
		for k, v := range c.Capacity(n) {
			res.Capacity[k] += v
		}
	}
	reqs := make([]model.Vec, len(jobs))
	gpus := make([]int, len(jobs))
	for i, j := range jobs {
		reqs[i], gpus[i] = c.Request(&j.Spec), j.Spec.Replica()
	}
	res.PerGPU = metrics.ReferencePerGPU(len(names), reqs, gpus)
	for n, node := range c.Nodes {
		res.Structural += metrics.StrandedOn(node.GPUs, c.Capacity(n), res.PerGPU)
	}
	return res
}

// sampleResources records at t what jobs hold of each resource, the
// stranded GPUs and the waiting jobs, when they changed since the last
// sample; a sample at the same instant as the last replaces it.
func (r *run) sampleResources(t model.Time) {
	res := r.res
	if res == nil {
		return
	}
	c := r.cfg.Cluster
	used := make([]int64, len(res.Names))
	avail := make(model.Vec, len(res.Names))
	stranded := 0
	for n := range c.Nodes {
		capa, u := c.Capacity(n), r.state.Used(n)
		for k := range used {
			used[k] += u[k]
			avail[k] = capa[k] - u[k]
		}
		stranded += metrics.StrandedOn(bits.OnesCount64(r.state.FreeMask(n)), avail, res.PerGPU)
	}
	waiting := len(r.state.Waiting())
	if n := len(res.Samples); n > 0 {
		last := res.Samples[n-1]
		if last.Stranded == stranded && last.Waiting == waiting && slices.Equal(last.Used, used) {
			return
		}
		if last.T == t {
			res.Samples = res.Samples[:n-1]
		}
	}
	res.Samples = append(res.Samples, metrics.ResourceSample{T: t, Stranded: stranded, Waiting: waiting, Used: used})
}
