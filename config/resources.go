package config

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpusched/gpusched/core/model"
)

// maxAmount bounds any one resource amount: 2^53, so that amounts survive
// a trip through JSON numbers and sums over a large cluster stay far from
// overflow.
const maxAmount = 1 << 53

// ParseAmount reads an amount of the named resource in Kubernetes quantity
// syntax: CPUs as cores ("2", "0.5") or millicores ("500m") and returned
// in millicores; memory and storage in bytes with binary or decimal
// suffixes ("64Gi", "512M", "1000000"); any other resource as a whole
// count. Negative, fractional counts and amounts over 2^53 are errors.
func ParseAmount(name, s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("%s: empty amount", name)
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a quantity (e.g. %s)", name, s, exampleAmount(name))
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%s: %q is negative", name, s)
	}
	var v int64
	switch name {
	case model.ResourceCPU:
		if q.Cmp(*resource.NewQuantity(maxAmount/1000, resource.DecimalSI)) > 0 {
			return 0, fmt.Errorf("%s: %q is too large", name, s)
		}
		v = q.MilliValue()
		if q.Cmp(*resource.NewMilliQuantity(v, resource.DecimalSI)) != 0 {
			return 0, fmt.Errorf("%s: %q is finer than a millicore", name, s)
		}
	default:
		if q.Cmp(*resource.NewQuantity(maxAmount, resource.DecimalSI)) > 0 {
			return 0, fmt.Errorf("%s: %q is too large", name, s)
		}
		v = q.Value()
		if q.Cmp(*resource.NewQuantity(v, resource.DecimalSI)) != 0 {
			return 0, fmt.Errorf("%s: %q is not a whole number", name, s)
		}
	}
	return v, nil
}

// AmountFromFloat converts a JSON or YAML number of the named resource:
// CPUs in cores (to millicores), anything else as a whole number of its
// unit (bytes for memory).
func AmountFromFloat(name string, f float64) (int64, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("%s: %v is not a non-negative number", name, f)
	}
	if name == model.ResourceCPU {
		m := f * 1000
		if m > maxAmount || m != math.Trunc(m) {
			return 0, fmt.Errorf("%s: %v cores is not a whole number of millicores up to 2^53", name, f)
		}
		return int64(m), nil
	}
	if f > maxAmount || f != math.Trunc(f) {
		return 0, fmt.Errorf("%s: %v is not a whole number up to 2^53", name, f)
	}
	return int64(f), nil
}

// ParseResourceList reads "NAME=AMOUNT,..." (e.g. "cpu=2,memory=8Gi,
// rdma/hca=1") with ParseAmount; a name given twice is an error. An empty
// string is an empty list.
func ParseResourceList(s string) (model.Resources, error) {
	out := model.Resources{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, amount, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want NAME=AMOUNT, e.g. cpu=2 or memory=8Gi", part)
		}
		if err := CheckResourceName(name); err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s given twice", name)
		}
		v, err := ParseAmount(name, amount)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// CheckResourceName accepts a resource name as Kubernetes writes them: an
// optional DNS prefix and a slash, then letters, digits, '-', '_' and
// '.'; "gpu" and "nvidia.com/gpu" are refused (GPUs are counted apart).
func CheckResourceName(name string) error {
	if name == "gpu" || name == "gpus" || name == "nvidia.com/gpu" {
		return fmt.Errorf("resource %q: GPUs are requested with gpus, not as a named resource", name)
	}
	if len(name) > 253 || strings.Count(name, "/") > 1 {
		return fmt.Errorf("resource %q: want NAME or PREFIX/NAME of at most 253 characters", name)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./", r)
		if !ok {
			return fmt.Errorf("resource %q: only letters, digits, '-', '_', '.' and one '/' are allowed", name)
		}
	}
	return nil
}

// FormatResources writes r as ParseResourceList reads it, names sorted.
func FormatResources(r model.Resources) string {
	names := r.Names()
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + model.FormatAmount(n, r[n])
	}
	return strings.Join(parts, ",")
}

func exampleAmount(name string) string {
	switch name {
	case model.ResourceCPU:
		return `"2", "0.5" or "500m"`
	case model.ResourceMemory, model.ResourceEphemeral:
		return `"64Gi" or "512Mi"`
	}
	return `"1"`
}
