package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"

	"github.com/gpusched/gpusched/core/model"
)

// Amount is a resource amount as a file writes it: a number (CPUs in
// cores, memory and storage in bytes, anything else a count) or a
// Kubernetes quantity string ("64", "500m", "512Gi"). Decoding keeps the
// text; Value checks it for one resource, so that an error can name the
// field.
type Amount struct {
	text   string // the quantity string, or the number as JSON wrote it
	number bool
}

// AmountOf returns the Amount written as the string s.
func AmountOf(s string) Amount { return Amount{text: s} }

// UnmarshalJSON keeps a JSON number or string (null is the empty string);
// anything else is a *json.UnmarshalTypeError.
func (a *Amount) UnmarshalJSON(b []byte) error {
	text, number, err := DecodeAmount(b, reflect.TypeFor[Amount]())
	if err != nil {
		return err
	}
	a.text, a.number = text, number
	return nil
}

// DecodeAmount reads a resource amount as JSON writes it: a number (its
// text, number true), a string, or null (""). Anything else is a
// *json.UnmarshalTypeError naming the kind of value and type t.
func DecodeAmount(b []byte, t reflect.Type) (text string, number bool, err error) {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		err = json.Unmarshal(b, &text)
		return text, false, err
	case string(b) == "null":
		return "", false, nil
	case len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9'):
		return string(b), true, nil
	}
	what := "value"
	switch {
	case len(b) == 0:
	case b[0] == '{':
		what = "object"
	case b[0] == '[':
		what = "array"
	case b[0] == 't' || b[0] == 'f':
		what = "bool"
	}
	return "", false, &json.UnmarshalTypeError{Value: what, Type: t}
}

// MarshalJSON writes the amount as it was read.
func (a Amount) MarshalJSON() ([]byte, error) {
	if a.number {
		return []byte(a.text), nil
	}
	return json.Marshal(a.text)
}

// Value returns the amount of the named resource in its unit (CPU in
// millicores, memory in bytes): ParseAmount for a string, AmountFromFloat
// for a number.
func (a Amount) Value(name string) (int64, error) {
	if !a.number {
		return ParseAmount(name, a.text)
	}
	f, err := strconv.ParseFloat(a.text, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %s is not a number", name, a.text)
	}
	return AmountFromFloat(name, f)
}

// capacity returns the capacity that s gives each of its nodes besides
// GPUs (nil when it gives none): its cpu (or cpus), memory, pods and
// resources entries.
func (s NodeSpec) capacity() (model.Resources, *specError) {
	var out model.Resources
	set := func(res string, v int64) {
		if out == nil {
			out = model.Resources{}
		}
		out[res] = v
	}
	given := map[string]string{} // resource to the key that gave it
	keys := []struct {
		key, res string
		a        *Amount
	}{
		{"cpu", model.ResourceCPU, s.CPU}, {"cpus", model.ResourceCPU, s.CPUs},
		{"memory", model.ResourceMemory, s.Memory}, {"pods", model.ResourcePods, s.Pods},
	}
	for _, k := range keys {
		a := k.a
		if a == nil {
			continue
		}
		if prev, dup := given[k.res]; dup {
			return nil, &specError{"." + k.key, fmt.Sprintf("%s already gives %s: give one of them", prev, k.res)}
		}
		v, err := a.Value(k.res)
		if err != nil {
			return nil, &specError{"." + k.key, trimName(err, k.res)}
		}
		given[k.res] = k.key
		set(k.res, v)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Resources)) {
		field := ".resources." + name
		if err := CheckResourceName(name); err != nil {
			return nil, &specError{field, err.Error()}
		}
		if prev, dup := given[name]; dup {
			return nil, &specError{field, fmt.Sprintf("%s already gives %s: give one of them", prev, name)}
		}
		v, err := s.Resources[name].Value(name)
		if err != nil {
			return nil, &specError{field, trimName(err, name)}
		}
		set(name, v)
	}
	return out, nil
}

// trimName drops the "NAME: " prefix of a ParseAmount error, which the
// field's path already says.
func trimName(err error, name string) string {
	msg := err.Error()
	if len(msg) > len(name)+2 && msg[:len(name)+2] == name+": " {
		return msg[len(name)+2:]
	}
	return msg
}

// checkDeclared checks that when one nodes entry gives cpu, memory or
// pods, every entry gives it: a node that does not declare a resource
// another declares has none of it (model.Cluster), which is seldom what a
// file that leaves it out means. caps[i] is entry i's capacity.
func checkDeclared(file string, caps []model.Resources) error {
	for _, res := range []string{model.ResourceCPU, model.ResourceMemory, model.ResourcePods} {
		first := -1
		for i, c := range caps {
			if _, ok := c[res]; ok {
				first = i
				break
			}
		}
		if first < 0 {
			continue
		}
		for i, c := range caps {
			if _, ok := c[res]; !ok {
				return fieldError(file, "nodes["+strconv.Itoa(i)+"]",
					"gives no %s but nodes[%d] does: every entry must give it (write %s: 0 for nodes that have none)", res, first, resourceKey(res))
			}
		}
	}
	return nil
}

// resourceKey is the nodes entry key that gives resource res.
func resourceKey(res string) string {
	if res == model.ResourceCPU {
		return "cpus"
	}
	return res
}
