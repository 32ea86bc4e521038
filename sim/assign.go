package sim

import (
	"math/rand/v2"

	"github.com/gpusched/gpusched/core/model"
)

// AssignModels gives every job whose Model is not in known (for example a
// Philly job, which names none) a job type drawn uniformly from known, using
// a PCG generator seeded with seed and drawing once per such job in trace
// order. It returns how many jobs it changed. known must be non-empty.
func AssignModels(specs []model.JobSpec, known []string, seed uint64) int {
	set := make(map[string]bool, len(known))
	for _, k := range known {
		set[k] = true
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	n := 0
	for i := range specs {
		if specs[i].Steps > 0 || set[specs[i].Model] {
			continue
		}
		specs[i].Model = known[rng.IntN(len(known))]
		n++
	}
	return n
}
