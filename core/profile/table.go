package profile

import (
	"fmt"

	"github.com/gpusched/gpusched/core/model"
)

// Table binds a Matrix to a cluster and a reference GPU type and implements
// model.Profile. Build it once per run with NewTable.
type Table struct {
	m      *Matrix
	models []string
	index  map[string]int
	// pts[model][cluster type] are the points used for that pair.
	pts [][][]Point
	// scale[model][cluster type] multiplies the rate (TFLOPS ratio when the
	// matrix lacks the type, else 1).
	scale    [][]float64
	refPts   [][]Point // per model: points on the reference type
	tflops   []float64 // per cluster type
	refFLOPS float64
	// rates[model][cluster type][n] is Rate(pts[model][type], n) and
	// refRates[model][n] Rate(refPts[model], n), for n up to denseGPUs:
	// Speed is asked for the same few counts millions of times a run.
	rates    [][][]float64
	refRates [][]float64
}

// denseGPUs is the largest GPU count whose rates a Table keeps in arrays.
const denseGPUs = 64

// denseRates returns Rate(pts, n) for n from 0 to denseGPUs.
func denseRates(pts []Point) []float64 {
	r := make([]float64, denseGPUs+1)
	for n := range r {
		r[n] = Rate(pts, n)
	}
	return r
}

// rate is Rate(pts[mi][ti], n), from the arrays where they reach.
func (t *Table) rate(mi, ti, n int) float64 {
	if r := t.rates[mi][ti]; uint(n) < uint(len(r)) {
		return r[n]
	}
	return Rate(t.pts[mi][ti], n)
}

// refRate is Rate(refPts[mi], n), from the arrays where they reach.
func (t *Table) refRate(mi, n int) float64 {
	if r := t.refRates[mi]; uint(n) < uint(len(r)) {
		return r[n]
	}
	return Rate(t.refPts[mi], n)
}

// NewTable returns the profile of every job type in m on cluster c, with ref
// as the reference GPU type for duration jobs and for GPU types on which a
// job type has no measurements (see fallbackRow).
func NewTable(m *Matrix, c *model.Cluster, ref model.GPUType) (*Table, error) {
	if ref.TFLOPS <= 0 {
		return nil, fmt.Errorf("reference GPU type %q has no rated performance", ref.Name)
	}
	t := &Table{m: m, models: m.Models, index: make(map[string]int, len(m.Models)), refFLOPS: ref.TFLOPS}
	for _, ct := range c.Types {
		t.tflops = append(t.tflops, ct.TFLOPS)
	}
	for mi, name := range m.Models {
		t.index[name] = mi
		refPts := m.Points(name, ref.Name)
		t.refPts = append(t.refPts, refPts)
		row, scale := fallbackRow(m, name, c, ref)
		t.pts = append(t.pts, row)
		t.scale = append(t.scale, scale)
		t.refRates = append(t.refRates, denseRates(refPts))
		rates := make([][]float64, len(row))
		for ti, pts := range row {
			rates[ti] = denseRates(pts)
		}
		t.rates = append(t.rates, rates)
	}
	return t, nil
}

// fallbackRow returns a job type's points and rate multipliers on each
// cluster type. A type without measurements for the job type borrows the
// points of the reference type, or else of the first cluster type in order
// that has some, scaled by the ratio of rated TFLOPS (the rated-performance
// fallback); with no measurement to borrow, the job cannot run there.
func fallbackRow(m *Matrix, name string, c *model.Cluster, ref model.GPUType) ([][]Point, []float64) {
	src, srcFLOPS := m.Points(name, ref.Name), ref.TFLOPS
	for _, ct := range c.Types {
		if pts := m.Points(name, ct.Name); len(src) == 0 && len(pts) > 0 && ct.TFLOPS > 0 {
			src, srcFLOPS = pts, ct.TFLOPS
		}
	}
	row, scale := make([][]Point, len(c.Types)), make([]float64, len(c.Types))
	for ti, ct := range c.Types {
		row[ti], scale[ti] = m.Points(name, ct.Name), 1
		if len(row[ti]) == 0 && len(src) > 0 {
			row[ti], scale[ti] = src, ct.TFLOPS/srcFLOPS
		}
	}
	return row, scale
}

// ModelIndex returns the index of a job type, or -1 when the matrix lacks it.
func (t *Table) ModelIndex(name string) int {
	if i, ok := t.index[name]; ok {
		return i
	}
	return -1
}

// Models returns the job types, sorted.
func (t *Table) Models() []string { return t.models }

// Work returns a job's model index and total work in profile units: steps
// for a step job, seconds on the reference type for a duration job.
func (t *Table) Work(s *model.JobSpec) (int, float64, error) {
	mi := t.ModelIndex(s.Model)
	if s.Steps > 0 {
		if mi < 0 {
			return -1, 0, fmt.Errorf("job %s: job type %q is not in the throughput matrix: a job given in steps needs "+
				"its job type's steps/s; add a profile for it with --profiles (docs/PROFILES.md)", s.ID, s.Model)
		}
		return mi, float64(s.Steps), nil
	}
	return mi, s.Duration.Seconds(), nil
}

// Speed implements model.Profile. A step job runs at its matrix rate on
// type ti. A duration job runs at 1 (work is seconds on the reference type at
// its requested count) scaled to n GPUs of type ti by, in order of
// preference: its own scaling curve (Spec.Scaling, see scaledSpeed), the
// matrix ratio when its job type is in the matrix, else the TFLOPS ratio
// times n/GPUs (linear in n).
func (t *Table) Speed(j *model.Job, ti, n int) float64 {
	if j.Spec.Steps > 0 {
		return t.rate(j.Model, ti, n) * t.scale[j.Model][ti]
	}
	if s, ok := t.scaledSpeed(&j.Spec, ti, n); ok {
		return s
	}
	req := j.Spec.GPUs
	if j.Model >= 0 {
		if base := t.refRate(j.Model, req); base > 0 {
			return t.rate(j.Model, ti, n) * t.scale[j.Model][ti] / base
		}
	}
	return t.tflops[ti] / t.refFLOPS * float64(n) / float64(req)
}

// scaledSpeed returns a duration job's speed from its scaling curve: the
// TFLOPS ratio of type ti to the reference type times
// ScaleRate(n)/ScaleRate(GPUs), capped at the largest measured count. It
// reports false when the job has no curve, or its curve gives 0 at the
// requested count (then the duration cannot be scaled by it).
func (t *Table) scaledSpeed(s *model.JobSpec, ti, n int) (float64, bool) {
	if len(s.Scaling) == 0 {
		return 0, false
	}
	base := ScaleRate(s.Scaling, s.GPUs)
	if base <= 0 {
		return 0, false
	}
	return t.tflops[ti] / t.refFLOPS * ScaleRate(s.Scaling, n) / base, true
}
