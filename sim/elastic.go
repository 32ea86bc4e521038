package sim

import (
	"fmt"
	"math"

	"github.com/gpusched/gpusched/core/model"
)

// MakeElastic turns the rigid jobs of a trace into elastic ones for scaling
// experiments: a job that requests n > 1 replicas keeps n as its maximum and
// its request, and gets the minimum ⌈frac·n⌉ replicas (at least one). Jobs
// of one replica and jobs that are already elastic are left alone. It
// returns how many jobs it changed; frac must be in (0, 1].
func MakeElastic(specs []model.JobSpec, frac float64) (int, error) {
	if !(frac > 0 && frac <= 1) {
		return 0, fmt.Errorf("elastic minimum fraction must be in (0, 1], got %g", frac)
	}
	changed := 0
	for i := range specs {
		s := &specs[i]
		r := s.Replica()
		n := s.GPUs / r
		if s.Elastic() || n <= 1 {
			continue
		}
		s.MinGPUs = max(int(math.Ceil(frac*float64(n)-1e-9)), 1) * r
		s.MaxGPUs = s.GPUs
		if s.MinGPUs < s.MaxGPUs {
			changed++
		}
	}
	return changed, nil
}
