//go:build linux && cgo

package machine

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/service/api"
)

// DiscoverGPUs lists the machine's GPUs through NVML (the NVIDIA driver's
// libnvidia-ml.so.1): device index, type (config.TypeFromName of the device name),
// memory and UUID. It fails, wrapping ErrNoGPUs, when the library is not
// installed or finds no device.
func DiscoverGPUs() ([]api.GPU, error) {
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, fmt.Errorf("%w: NVML library libnvidia-ml.so.1 not found (no NVIDIA driver on this machine?)", ErrNoGPUs)
		}
		return nil, fmt.Errorf("%w: NVML init: %s", ErrNoGPUs, ret.Error())
	}
	defer lib.Shutdown()
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML device count: %s", ret.Error())
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: NVML reports no GPU device", ErrNoGPUs)
	}
	gpus := make([]api.GPU, 0, n)
	for i := range n {
		g, err := nvmlDevice(lib, i)
		if err != nil {
			return nil, err
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

// nvmlDevice describes device i.
func nvmlDevice(lib nvml.Interface, i int) (api.GPU, error) {
	d, ret := lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return api.GPU{}, fmt.Errorf("NVML device %d: %s", i, ret.Error())
	}
	name, ret := d.GetName()
	if ret != nvml.SUCCESS {
		return api.GPU{}, fmt.Errorf("NVML device %d name: %s", i, ret.Error())
	}
	g := api.GPU{Index: i, Type: config.TypeFromName(name)}
	if mem, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
		g.MemMiB = int(mem.Total >> 20)
	}
	if uuid, ret := d.GetUUID(); ret == nvml.SUCCESS {
		g.UUID = uuid
	}
	return g, nil
}

// GPUMinors returns the minor number of each GPU's device node
// (/dev/nvidiaM) by its NVML index, which need not be equal; nil when
// NVML cannot tell.
func GPUMinors() map[int]int {
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil
	}
	defer lib.Shutdown()
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil
	}
	out := make(map[int]int, n)
	for i := range n {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil
		}
		m, ret := d.GetMinorNumber()
		if ret != nvml.SUCCESS {
			return nil
		}
		out[i] = m
	}
	return out
}
