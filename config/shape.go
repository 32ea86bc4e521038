package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// checkShape compares a decoded JSON value v (from encoding/json into any)
// with the Go type t that it will be decoded into, and reports the first
// mismatch with its path, e.g. `nodes[1]: unknown field "gpu" (known: ...)`
// or `nodes[0].gpus: want an integer, got "eight"`. Keys must match the json
// tags exactly (encoding/json alone would accept "GPUS" for "gpus"). Scalars
// for string fields are not checked: the YAML decoder turns them into
// strings. Struct fields are found by their json tags; embedded structs are
// not supported.
func checkShape(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil // null leaves the zero value
	}
	if t == reflect.TypeFor[Amount]() {
		switch v.(type) {
		case json.Number, string:
			return nil
		}
		return shapeError(path, "want a number or a quantity such as \"64\", \"500m\" or \"512Gi\", got %s", describeJSON(v))
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return shapeError(path, "want a mapping of fields, got %s", describeJSON(v))
		}
		return checkStruct(m, t, path)
	case reflect.Slice:
		s, ok := v.([]any)
		if !ok {
			return shapeError(path, "want a list, got %s", describeJSON(v))
		}
		for i, e := range s {
			if err := checkShape(e, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return shapeError(path, "want a mapping, got %s", describeJSON(v))
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if err := checkShape(m[k], t.Elem(), path+"."+k); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return checkInt(v, path)
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			return shapeError(path, "want a number, got %s", describeJSON(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return shapeError(path, "want true or false, got %s", describeJSON(v))
		}
	case reflect.String:
		switch v.(type) {
		case map[string]any, []any:
			return shapeError(path, "want a string, got %s", describeJSON(v))
		}
	}
	return nil
}

// checkInt checks that v is an integer that fits in an int64.
func checkInt(v any, path string) error {
	n, ok := v.(json.Number)
	if !ok {
		return shapeError(path, "want an integer, got %s", describeJSON(v))
	}
	if _, err := n.Int64(); err == nil {
		return nil
	}
	if f, err := n.Float64(); err == nil && f == math.Trunc(f) {
		return shapeError(path, "integer %s out of range", n)
	}
	return shapeError(path, "want an integer, got %s", n)
}

// checkStruct checks the fields of mapping m against struct type t.
func checkStruct(m map[string]any, t reflect.Type, path string) error {
	fields := map[string]reflect.Type{}
	structFields(t, fields)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		ft, ok := fields[k]
		if !ok {
			known := slices.Sorted(maps.Keys(fields))
			return shapeError(path, "unknown field %q (known: %s)", k, strings.Join(known, ", "))
		}
		sub := k
		if path != "" {
			sub = path + "." + k
		}
		if err := checkShape(m[k], ft, sub); err != nil {
			return err
		}
	}
	return nil
}

// shapeError formats a mismatch at path; the empty path is the top level.
func shapeError(path, format string, args ...any) error {
	if path == "" {
		path = "top level"
	}
	return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
}

// describeJSON describes a decoded JSON value for an error message.
func describeJSON(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return strconv.Quote(v)
	case json.Number:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}

// structFields adds the JSON fields of struct type t to fields, those of
// embedded structs without a JSON name included (encoding/json promotes
// them).
func structFields(t reflect.Type, fields map[string]reflect.Type) {
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			structFields(f.Type, fields)
			continue
		}
		if f.IsExported() && name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
}
