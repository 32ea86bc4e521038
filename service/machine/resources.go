package machine

import (
	"fmt"
	"runtime"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
)

// HostResources returns what this machine has besides GPUs, as the agent
// reports it by default: its CPUs (the logical CPUs the agent's process
// may run on, runtime.NumCPU, in millicores) and, on Linux, its physical
// memory (sysinfo's total RAM in bytes, rounded down to a MiB). Neither
// knows a container's cgroup limits: an agent in a container gives its
// figures (Config.Capacity, gpusched agent --cpus, --memory).
func HostResources() (model.Resources, error) {
	r := model.Resources{model.ResourceCPU: int64(runtime.NumCPU()) * 1000}
	mem, err := hostMemory()
	if err != nil {
		return nil, fmt.Errorf("host memory: %w", err)
	}
	if mem > 0 {
		r[model.ResourceMemory] = mem &^ (1<<20 - 1)
	}
	return r, nil
}

// NodeCapacity returns what a node offers jobs besides its GPUs: host (its
// CPUs and memory) and extra (named resources, such as "rdma/hca"), less
// what the admin reserves for the system. Reserving more than the node
// has, or a resource it does not have, is an error; so is an extra
// resource named cpu, memory or pods, or one given in host too.
func NodeCapacity(host, reserve, extra model.Resources) (model.Resources, error) {
	out := make(model.Resources, len(host)+len(extra))
	for name, v := range host {
		out[name] = v
	}
	for _, name := range extra.Names() {
		switch _, dup := out[name]; {
		case name == model.ResourceCPU || name == model.ResourceMemory:
			return nil, fmt.Errorf("resource %s: the node's %s is detected or given apart (--cpus, --memory), not as a named resource", name, name)
		case name == model.ResourcePods:
			return nil, fmt.Errorf("resource %s: the service counts no pods (one process group per job and node)", name)
		case dup:
			return nil, fmt.Errorf("resource %s given twice", name)
		}
		out[name] = extra[name]
	}
	for _, name := range reserve.Names() {
		have, ok := out[name]
		if !ok {
			return nil, fmt.Errorf("reserve %s: the node has no %s to reserve", name, name)
		}
		if reserve[name] > have {
			return nil, fmt.Errorf("reserve %s: %s is more than the node's %s", name,
				model.FormatAmount(name, reserve[name]), model.FormatAmount(name, have))
		}
		out[name] = have - reserve[name]
	}
	return out, nil
}

// CheckCapacity validates Config.Capacity: resource names as Kubernetes
// writes them, amounts ≥ 0, no pods.
func CheckCapacity(c model.Resources) error {
	for _, name := range c.Names() {
		if err := config.CheckResourceName(name); err != nil {
			return err
		}
		if name == model.ResourcePods {
			return fmt.Errorf("resource %s: the service counts no pods", name)
		}
		if c[name] < 0 {
			return fmt.Errorf("resource %s: negative amount %d", name, c[name])
		}
	}
	return nil
}
