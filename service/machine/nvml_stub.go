//go:build !linux || !cgo

package machine

import (
	"fmt"

	"github.com/gpusched/gpusched/service/api"
)

// DiscoverGPUs would list the machine's GPUs through NVML; this build has no
// NVML (it needs Linux and cgo), so it always fails, wrapping ErrNoGPUs.
func DiscoverGPUs() ([]api.GPU, error) {
	return nil, fmt.Errorf("%w: NVML not available (built without cgo or not on Linux)", ErrNoGPUs)
}

// GPUMinors would return the GPUs' device minor numbers through NVML; this
// build has none.
func GPUMinors() map[int]int { return nil }
