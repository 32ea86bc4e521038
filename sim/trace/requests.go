package trace

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
)

// requests checks what one replica of the job asks for besides GPUs —
// replica_cpu_milli, replica_mem_mib, cpus, memory and resources — and
// sets it on s (nil when it asks for nothing: zero amounts are left out).
// A resource given twice, under two keys, is an error.
func (j *jsonJob) requests(s *model.JobSpec) error {
	given := map[string]string{} // resource to the key that gave it
	set := func(key, res string, v int64) error {
		if prev, dup := given[res]; dup {
			return fmt.Errorf("%s and %s both give the replica's %s: give one", prev, key, res)
		}
		given[res] = key
		if v > 0 {
			if s.Requests == nil {
				s.Requests = model.Resources{}
			}
			s.Requests[res] = v
		}
		return nil
	}
	for _, c := range []struct {
		key, res string
		v        *int
		unit     int64
	}{{"replica_cpu_milli", model.ResourceCPU, j.ReplicaCPUMilli, 1}, {"replica_mem_mib", model.ResourceMemory, j.ReplicaMemMiB, 1 << 20}} {
		if c.v == nil {
			continue
		}
		if msg := checkRange(c.key, float64(*c.v), 0, math.MaxInt32); msg != "" {
			return errors.New(msg)
		}
		if err := set(c.key, c.res, int64(*c.v)*c.unit); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		key, res string
		a        *config.Amount
	}{{"cpus", model.ResourceCPU, j.CPUs}, {"memory", model.ResourceMemory, j.Memory}} {
		if c.a == nil {
			continue
		}
		v, err := c.a.Value(c.res)
		if err != nil {
			return fmt.Errorf("field %q: %w", c.key, err)
		}
		if err := set(c.key, c.res, v); err != nil {
			return err
		}
	}
	return j.namedRequests(set)
}

// namedRequests checks the resources field's names and amounts and hands
// each to set, in name order.
func (j *jsonJob) namedRequests(set func(key, res string, v int64) error) error {
	for _, name := range slices.Sorted(maps.Keys(j.Resources)) {
		if err := config.CheckResourceName(name); err != nil {
			return fmt.Errorf("field \"resources\": %w", err)
		}
		v, err := j.Resources[name].Value(name)
		if err != nil {
			return fmt.Errorf("field \"resources\": %w", err)
		}
		if err := set("resources."+name, name, v); err != nil {
			return err
		}
	}
	return nil
}
