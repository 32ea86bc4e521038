package machine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

// AutoGPUs is the --gpus value that asks for discovery through NVML.
const AutoGPUs = "auto"

// ResolveGPUs returns the node's GPUs for a --gpus value: "auto" (or empty)
// discovers them with DiscoverGPUs; anything else is declared with
// ParseGPUs. A failed discovery says how to declare GPUs instead.
func ResolveGPUs(spec string) ([]api.GPU, error) {
	s := strings.TrimSpace(spec)
	if s != "" && !strings.EqualFold(s, AutoGPUs) {
		return ParseGPUs(s)
	}
	gpus, err := DiscoverGPUs()
	if err == nil {
		err = ValidateGPUs(gpus)
	}
	if err != nil {
		return nil, fmt.Errorf("--gpus auto: %w; declare the node's GPUs with --gpus TYPE=N instead, e.g. --gpus v100=4", err)
	}
	return gpus, nil
}

// ParseGPUs declares a node's GPUs from a --gpus value "TYPE=N": N GPUs
// (1..model.MaxGPUsPerNode) of the catalog type TYPE (any case), with
// device indices 0..N-1 and the catalog's memory. A node has one GPU type,
// so a list naming two types is rejected; "v100=2,v100=2" is the same as
// "v100=4". Errors name the offending item.
func ParseGPUs(spec string) ([]api.GPU, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errors.New(`--gpus: empty; want auto or TYPE=N, e.g. "v100=4"`)
	}
	var (
		typ   model.GPUType
		count int
	)
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("--gpus: %q: empty item (stray comma?)", spec)
		}
		t, n, err := config.ParseGPUItem(item)
		if err != nil {
			return nil, fmt.Errorf("--gpus: %q: %w", item, err)
		}
		if count > 0 && t.Name != typ.Name {
			return nil, fmt.Errorf("--gpus: %q: a node has one GPU type, got %s and %s; run one agent per machine", spec, typ.Name, t.Name)
		}
		if n > model.MaxGPUsPerNode-count {
			return nil, fmt.Errorf("--gpus: %q: more than %d GPUs on one node", spec, model.MaxGPUsPerNode)
		}
		typ, count = t, count+n
	}
	gpus := make([]api.GPU, count)
	for i := range gpus {
		gpus[i] = api.GPU{Index: i, Type: typ.Name, MemMiB: typ.MemMiB}
	}
	return gpus, nil
}

// ValidateGPUs checks a node's GPU list: 1..model.MaxGPUsPerNode GPUs with
// non-negative, distinct indices and one non-empty type.
func ValidateGPUs(gpus []api.GPU) error {
	if len(gpus) == 0 || len(gpus) > model.MaxGPUsPerNode {
		return fmt.Errorf("%d GPUs: want 1..%d", len(gpus), model.MaxGPUsPerNode)
	}
	seen := make(map[int]bool, len(gpus))
	for _, g := range gpus {
		switch {
		case g.Index < 0:
			return fmt.Errorf("GPU index %d: negative", g.Index)
		case seen[g.Index]:
			return fmt.Errorf("GPU index %d: given twice", g.Index)
		case g.Type == "":
			return fmt.Errorf("GPU %d: empty type", g.Index)
		case g.Type != gpus[0].Type:
			return fmt.Errorf("GPU %d: type %s differs from %s; a node has one GPU type", g.Index, g.Type, gpus[0].Type)
		}
		seen[g.Index] = true
	}
	return nil
}
