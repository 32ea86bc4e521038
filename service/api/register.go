package api

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/core/membership"
	"github.com/gpusched/gpusched/core/model"
)

// Check validates a registration (a *FieldError names what is wrong): its
// GPUs come back sorted by index with lower-case types, its capacity
// parsed.
func (r *Register) Check() ([]GPU, model.Resources, error) {
	gpus, ferr := r.checkGPUs()
	if ferr != nil {
		return nil, nil, ferr
	}
	capa, err := ParseResources("capacity", r.Capacity)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := capa[model.ResourcePods]; ok {
		return nil, nil, &FieldError{Field: "capacity.pods", Message: "the service counts no pods (one process group per job and node)"}
	}
	return gpus, capa, nil
}

// checkGPUs validates a registration's name, address and GPUs; the GPUs
// come back sorted by index with lower-case types.
func (r *Register) checkGPUs() ([]GPU, *FieldError) {
	if _, err := membership.New("check", []membership.Slot{{Host: r.Name, GPU: 0}}); err != nil || r.Name == "" {
		return nil, &FieldError{Field: "name", Message: fmt.Sprintf("%q is not a valid node name (no ':', ',', white space or control characters)", r.Name)}
	}
	if strings.ContainsAny(r.Addr, " \t\r\n\x00") {
		return nil, &FieldError{Field: "addr", Message: "must not contain white space or control characters"}
	}
	if len(r.GPUs) == 0 || len(r.GPUs) > model.MaxGPUsPerNode {
		return nil, &FieldError{Field: "gpus", Message: fmt.Sprintf("%d GPUs: want 1..%d", len(r.GPUs), model.MaxGPUsPerNode)}
	}
	gpus := slices.Clone(r.GPUs)
	slices.SortFunc(gpus, func(a, b GPU) int { return a.Index - b.Index })
	for i := range gpus {
		g := &gpus[i]
		g.Type = strings.ToLower(strings.TrimSpace(g.Type))
		switch {
		case g.Index < 0 || (i > 0 && g.Index == gpus[i-1].Index):
			return nil, &FieldError{Field: "gpus", Message: fmt.Sprintf("GPU index %d is negative or given twice", g.Index)}
		case g.Type == "":
			return nil, &FieldError{Field: "gpus", Message: fmt.Sprintf("GPU %d has no type", g.Index)}
		case g.Type != gpus[0].Type:
			return nil, &FieldError{Field: "gpus", Message: fmt.Sprintf("GPUs of types %q and %q: a node must hold GPUs of one type (run one agent per type)", gpus[0].Type, g.Type)}
		case g.MemMiB < 0:
			return nil, &FieldError{Field: "gpus", Message: fmt.Sprintf("GPU %d: negative memory", g.Index)}
		}
	}
	return gpus, nil
}
