//go:build linux && cgo

package machine

import (
	"context"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpusched/gpusched/service/api"
)

// NVMLPower reads the power draw of a node's GPUs through NVML
// (nvmlDeviceGetPowerUsage, in milliwatts). Close releases NVML.
type NVMLPower struct {
	lib  nvml.Interface
	devs []nvml.Device
	idx  []int
}

// OpenNVMLPower opens NVML for the GPUs with the given device indices. It
// fails when the NVML library is absent or a device cannot be opened.
func OpenNVMLPower(indices []int) (*NVMLPower, error) {
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, fmt.Errorf("%w: NVML library libnvidia-ml.so.1 not found", errNoPower)
		}
		return nil, fmt.Errorf("%w: NVML init: %s", errNoPower, ret.Error())
	}
	p := &NVMLPower{lib: lib, idx: indices}
	for _, i := range indices {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("%w: NVML device %d: %s", errNoPower, i, ret.Error())
		}
		p.devs = append(p.devs, d)
	}
	return p, nil
}

// Sample implements PowerSampler: one reading per GPU that reports its
// power (a GPU that does not support it is left out), no node reading.
func (p *NVMLPower) Sample(context.Context) ([]api.GPUPower, float64, error) {
	out := make([]api.GPUPower, 0, len(p.devs))
	for k, d := range p.devs {
		mw, ret := d.GetPowerUsage()
		switch {
		case ret == nvml.ERROR_NOT_SUPPORTED:
			continue
		case ret != nvml.SUCCESS:
			return nil, 0, fmt.Errorf("NVML device %d power: %s", p.idx[k], ret.Error())
		}
		out = append(out, api.GPUPower{Index: p.idx[k], Watts: float64(mw) / 1000})
	}
	if len(out) == 0 {
		return nil, 0, fmt.Errorf("no GPU reports its power through NVML")
	}
	return out, 0, nil
}

// Close shuts NVML down.
func (p *NVMLPower) Close() error {
	if ret := p.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML shutdown: %s", ret.Error())
	}
	return nil
}
