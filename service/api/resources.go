package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
)

// MaxResources bounds the named resources of a spec (resources) and of a
// node's capacity.
const MaxResources = 64

// Quantity is an amount of a resource as a user writes it: a JSON number
// (2, 0.5) or a string in Kubernetes quantity syntax ("500m", "64Gi").
// The empty Quantity is absent. It keeps the text as given; Amount reads
// it.
type Quantity string

// UnmarshalJSON accepts a JSON number, string or null (absent).
func (q *Quantity) UnmarshalJSON(data []byte) error {
	text, _, err := config.DecodeAmount(data, reflect.TypeFor[Quantity]())
	if err != nil {
		return err
	}
	*q = Quantity(text)
	return nil
}

// MarshalJSON writes a number as a JSON number, anything else as a string.
func (q Quantity) MarshalJSON() ([]byte, error) {
	if q != "" && (q[0] == '-' || q[0] >= '0' && q[0] <= '9') && strings.TrimSpace(string(q)) == string(q) && json.Valid([]byte(q)) {
		return []byte(q), nil
	}
	return json.Marshal(string(q))
}

// Amount returns the quantity of the named resource in the model's unit
// (config.ParseAmount: CPU in millicores, memory in bytes); 0 when q is
// absent.
func (q Quantity) Amount(name string) (int64, error) {
	if q == "" {
		return 0, nil
	}
	return config.ParseAmount(name, string(q))
}

// Requests returns what each GPU of the job asks of its node besides the
// GPU (the core's model.JobSpec.Requests: a service job's replica, as the
// core counts them, is one GPU): cpus, memory and the named resources,
// without zero amounts; nil when it asks for nothing. A bad amount or name
// is a *FieldError naming the field ("cpus", "memory", "resources.NAME").
func (s *JobSpec) Requests() (model.Resources, error) {
	var out model.Resources
	add := func(field, name string, q Quantity) error {
		v, err := q.Amount(name)
		if err != nil {
			return fieldErr(field, "%s", amountMessage(err, name))
		}
		if v > 0 {
			if out == nil {
				out = model.Resources{}
			}
			out[name] = v
		}
		return nil
	}
	if err := add("cpus", model.ResourceCPU, s.CPUs); err != nil {
		return nil, err
	}
	if err := add("memory", model.ResourceMemory, s.Memory); err != nil {
		return nil, err
	}
	if len(s.Resources) > MaxResources {
		return nil, fieldErr("resources", "more than %d resources", MaxResources)
	}
	for _, name := range sortedKeys(s.Resources) {
		field := "resources." + name
		if err := checkSpecResource(name); err != nil {
			return nil, fieldErr(field, "%v", err)
		}
		if err := add(field, name, s.Resources[name]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkSpecResource accepts the name of a resource in a spec's resources:
// a valid name that is neither CPU nor memory (they have fields of their
// own) nor pods (the service does not count them).
func checkSpecResource(name string) error {
	switch name {
	case model.ResourceCPU:
		return fmt.Errorf("give CPUs as cpus, not as a named resource")
	case model.ResourceMemory:
		return fmt.Errorf("give memory as memory, not as a named resource")
	case model.ResourcePods:
		return fmt.Errorf("the service counts no pods (one process group per job and node)")
	}
	return config.CheckResourceName(name)
}

// amountMessage is a ParseAmount error without the resource name it
// starts with (the field names it already).
func amountMessage(err error, name string) string {
	return strings.TrimPrefix(err.Error(), name+": ")
}

// FormatResources writes r as the API shows amounts: name to Kubernetes
// quantity ("cpu": "2", "memory": "64Gi"; model.FormatAmount); nil for an
// empty r.
func FormatResources(r model.Resources) map[string]string {
	if len(r) == 0 {
		return nil
	}
	out := make(map[string]string, len(r))
	for name, v := range r {
		out[name] = model.FormatAmount(name, v)
	}
	return out
}

// ParseResources reads amounts as FormatResources writes them (any
// Kubernetes quantity is accepted); a bad name or amount is a *FieldError
// naming field.NAME. It returns nil for an empty m.
func ParseResources(field string, m map[string]string) (model.Resources, error) {
	if len(m) == 0 {
		return nil, nil
	}
	if len(m) > MaxResources {
		return nil, fieldErr(field, "more than %d resources", MaxResources)
	}
	out := make(model.Resources, len(m))
	for _, name := range sortedKeys(m) {
		if err := config.CheckResourceName(name); err != nil {
			return nil, fieldErr(field+"."+name, "%v", err)
		}
		v, err := config.ParseAmount(name, m[name])
		if err != nil {
			return nil, fieldErr(field+"."+name, "%s", amountMessage(err, name))
		}
		out[name] = v
	}
	return out, nil
}

// ResourceField names the spec field that asks for the named resource:
// "cpus", "memory" or "resources.NAME".
func ResourceField(name string) string {
	switch name {
	case model.ResourceCPU:
		return "cpus"
	case model.ResourceMemory:
		return "memory"
	}
	return "resources." + name
}

// sortedKeys returns the keys of m in order, so that the first problem
// reported is always the same.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
