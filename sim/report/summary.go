package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/sim/metrics"
)

// field is one field of a metrics.Summary named by its JSON key.
type field struct {
	key string
	val reflect.Value
	// omitEmpty: the tag says omitempty, which JSON honours for nil
	// pointers (an unknown figure) and empty maps.
	omitEmpty bool
}

// empty reports whether f is left out of the JSON summary: tagged omitempty
// and a nil pointer or an empty map.
func (f field) empty() bool {
	if !f.omitEmpty {
		return false
	}
	switch f.val.Kind() {
	case reflect.Pointer:
		return f.val.IsNil()
	case reflect.Map, reflect.Slice:
		return f.val.Len() == 0
	}
	return false
}

// resourceUtilKey is the summary key of the resources' utilisation, a map
// that tables write as one line per resource (resourceLabel).
const resourceUtilKey = "resource_util"

// resourceLabel is the table label of resource name's utilisation: "cpu
// util".
func resourceLabel(name string) string { return name + " util" }

// vectorOnly reports whether key is a figure that only runs on clusters
// with resources besides GPUs, or of traces whose reader left lines out,
// have: the HTML summary leaves its row out when no run has it, so that
// the other runs' reports stay as they were.
func vectorOnly(key string) bool {
	switch key {
	case "skipped", "stranded_gpus", "stranded_gpu_share", "stranded_gpus_waiting", "structural_stranded_gpus":
		return true
	}
	return false
}

// summaryFields returns the exported fields of s in declaration order, named
// by their JSON keys; fields tagged `json:"-"` are left out. Pointer fields
// stand for figures that may be unknown (nil).
func summaryFields(s metrics.Summary) []field {
	v := reflect.ValueOf(s)
	t := v.Type()
	fields := make([]field, 0, t.NumField())
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		key, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if key == "-" {
			continue
		}
		if key == "" {
			key = sf.Name
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty")
		fields = append(fields, field{key: key, val: v.Field(i), omitEmpty: omit})
	}
	return fields
}

// JSON writes s as one JSON object on one line, with the keys of
// metrics.Summary in declaration order, followed by a newline. Floats are
// written exactly (shortest form) and non-finite floats written as null (see the
// package documentation), so the same summary always gives the same bytes.
// A nil pointer field tagged omitempty (an unknown energy_kwh) and an empty
// map tagged omitempty (no rejected job's reasons) are left out; maps are
// written with sorted keys.
func JSON(w io.Writer, s metrics.Summary) error {
	b := []byte{'{'}
	for _, f := range summaryFields(s) {
		if f.empty() {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		key, err := json.Marshal(f.key)
		if err != nil {
			return fmt.Errorf("report: summary key %q: %w", f.key, err)
		}
		b = append(append(b, key...), ':')
		if b, err = appendJSONValue(b, f.val); err != nil {
			return fmt.Errorf("report: summary field %s: %w", f.key, err)
		}
	}
	b = append(b, '}', '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("report: write summary JSON: %w", err)
	}
	return nil
}

// appendJSONValue appends v as JSON, writing floats in their shortest exact form.
func appendJSONValue(b []byte, v reflect.Value) ([]byte, error) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(b, "null"...), nil
		}
		return strconv.AppendFloat(b, f, 'f', -1, 64), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	default:
		enc, err := json.Marshal(v.Interface())
		if err != nil {
			return b, err
		}
		return append(b, enc...), nil
	}
}

// formatFixed formats f with at most prec decimals, dropping trailing zeros
// and a trailing point; it never returns "-0".
func formatFixed(f float64, prec int) string {
	s := strconv.FormatFloat(f, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}
