package profile

import (
	"maps"
	"slices"

	"github.com/gpusched/gpusched/core/model"
)

// Merge returns a copy of m with the profiles applied in order; m itself is
// not changed. For each profile, every GPU type it measures replaces the
// matrix's points for (job type, GPU type) and is added to Types if new; GPU
// types it does not mention keep the matrix's points. A job type with
// throughput becomes one of Models. A positive PeakMemMiB sets the job
// type's peak memory. When two profiles name the same job type, the later
// one wins where they overlap. The zero Matrix is a valid m: profiles alone
// make a matrix. Points are copied and sorted; they must otherwise satisfy
// Profile's invariants (ParseProfiles guarantees them).
func (m *Matrix) Merge(ps ...Profile) *Matrix {
	out := &Matrix{
		Types:  slices.Clone(m.Types),
		Models: slices.Clone(m.Models),
		points: maps.Clone(m.points),
		peak:   maps.Clone(m.peak),
	}
	if out.points == nil {
		out.points = map[string]map[string][]Point{}
	}
	if out.peak == nil {
		out.peak = map[string]int{}
	}
	for _, p := range ps {
		if p.PeakMemMiB > 0 {
			out.peak[p.JobType] = p.PeakMemMiB
		}
		if len(p.Throughput) == 0 {
			continue
		}
		byType := maps.Clone(out.points[p.JobType]) // never write to m's maps
		if byType == nil {
			byType = map[string][]Point{}
			out.Models = append(out.Models, p.JobType)
		}
		for gpuType, pts := range p.Throughput {
			pts = slices.Clone(pts)
			slices.SortFunc(pts, func(a, b Point) int { return a.GPUs - b.GPUs })
			byType[gpuType] = pts
			if !slices.Contains(out.Types, gpuType) {
				out.Types = append(out.Types, gpuType)
			}
		}
		out.points[p.JobType] = byType
	}
	slices.Sort(out.Types)
	slices.Sort(out.Models)
	return out
}

// PeakMemMiB returns the peak memory per GPU of a job type in MiB, or 0 when
// it is unknown (the Gavel matrix gives none; profiles may).
func (m *Matrix) PeakMemMiB(jobType string) int { return m.peak[jobType] }

// FillPeakMem gives every spec that states no peak memory its job type's
// peak memory, so that feasibility never places the job on GPUs with less
// memory. A spec's own value wins. It returns how many specs it changed.
func (m *Matrix) FillPeakMem(specs []model.JobSpec) int {
	n := 0
	for i := range specs {
		s := &specs[i]
		if s.PeakMemMiB == 0 && m.PeakMemMiB(s.Model) > 0 {
			s.PeakMemMiB = m.PeakMemMiB(s.Model)
			n++
		}
	}
	return n
}
