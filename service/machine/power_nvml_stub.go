//go:build !linux || !cgo

package machine

import (
	"context"
	"fmt"

	"github.com/gpusched/gpusched/service/api"
)

// NVMLPower would read the GPUs' power through NVML; this build has no NVML
// (it needs Linux and cgo).
type NVMLPower struct{}

// OpenNVMLPower always fails in this build: NVML needs Linux and cgo.
func OpenNVMLPower([]int) (*NVMLPower, error) {
	return nil, fmt.Errorf("%w: built without cgo or not on Linux", errNoPower)
}

// Sample implements PowerSampler; it is never reached in this build.
func (*NVMLPower) Sample(context.Context) ([]api.GPUPower, float64, error) {
	return nil, 0, fmt.Errorf("%w: built without cgo or not on Linux", errNoPower)
}

// Close does nothing.
func (*NVMLPower) Close() error { return nil }
