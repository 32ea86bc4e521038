package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gpusched/gpusched/model"
)

// File is a cluster file (docs/CLUSTER.md) as decoded from YAML. Fields are
// added here as the cluster description grows (power model, storage,
// network); unknown fields in a file are an error, so a typo is never
// silently ignored.
type File struct {
	// GPUTypes overrides catalog types or declares new ones. Optional.
	GPUTypes []GPUTypeSpec `json:"gpu_types,omitempty"`
	// Nodes lists the nodes, each entry one node or a group of identical
	// nodes. At least one entry is required.
	Nodes []NodeSpec `json:"nodes"`
}

// GPUTypeSpec is one entry of a cluster file's gpu_types list. For a type in
// the catalog, the fields given replace the catalog's values; a type not in
// the catalog must give both MemMiB and TFLOPS.
type GPUTypeSpec struct {
	// Name is the type's name, compared without regard to case.
	Name string `json:"name"`
	// MemMiB is the memory of one GPU in MiB; nil keeps the catalog value.
	MemMiB *int `json:"mem_mib,omitempty"`
	// TFLOPS is the rated FP32 performance of one GPU; nil keeps the
	// catalog value.
	TFLOPS *float64 `json:"tflops,omitempty"`
}

// NodeSpec is one entry of a cluster file's nodes list: Count identical
// nodes. With Count 1 (or nil) the node is called Name; otherwise the nodes
// are called Name-0, Name-1, ..., Name-(Count-1).
type NodeSpec struct {
	// Name is the node's name, or the prefix of the group's names.
	Name string `json:"name"`
	// GPUType names a catalog type or one declared under gpu_types.
	GPUType string `json:"gpu_type"`
	// GPUs is the number of GPUs per node, 1..model.MaxGPUsPerNode.
	GPUs int `json:"gpus"`
	// Count is the number of nodes; nil means 1.
	Count *int `json:"count,omitempty"`
}

// ParseClusterFile decodes a cluster file and builds its cluster. name is
// used only in error messages, which have the form
// "NAME: nodes[2].gpus: must be 1..64, got 0".
func ParseClusterFile(name string, data []byte) (*model.Cluster, error) {
	f, err := DecodeFile(name, data)
	if err != nil {
		return nil, err
	}
	return f.Cluster(name)
}

// DecodeFile decodes a cluster file from YAML (or JSON, a subset) without
// checking its values. Unknown fields (matched exactly, case included),
// duplicate keys and values of the wrong kind are errors naming the field,
// e.g. `NAME: nodes[1]: unknown field "gpu" (known: count, gpu_type, gpus,
// name)`. name is used only in error messages.
func DecodeFile(name string, data []byte) (*File, error) {
	return decodeStrict[File](name, data)
}

// decodeStrict decodes YAML (or JSON) into a T, rejecting unknown fields,
// duplicate keys and values of the wrong kind with errors that name the
// field. name is used only in error messages.
func decodeStrict[T any](name string, data []byte) (*T, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, trimDecodePrefixes(err))
	}
	var tree any
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	if err := d.Decode(&tree); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkShape(tree, reflect.TypeFor[T](), ""); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var f T
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %s", name, trimDecodePrefixes(err))
	}
	return &f, nil
}

// trimDecodePrefixes drops the YAML library's "error converting YAML to
// JSON: " style prefixes, which say nothing to a user, from err's text.
func trimDecodePrefixes(err error) string {
	if _, ok := errors.AsType[*json.UnsupportedValueError](err); ok {
		return "numbers must be finite (no .nan or .inf)"
	}
	msg := err.Error()
	for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

// Cluster checks f and builds its cluster. Only the GPU types used by nodes
// are in the cluster's Types, in the order nodes first use them. name is
// used only in error messages.
func (f *File) Cluster(name string) (*model.Cluster, error) {
	known, err := f.typeTable(name)
	if err != nil {
		return nil, err
	}
	if len(f.Nodes) == 0 {
		return nil, fieldError(name, "nodes", "at least one node is required")
	}
	b := clusterBuilder{file: name, known: known, typeIndex: map[string]int{}, nodeEntry: map[string]int{}}
	for i, n := range f.Nodes {
		if err := b.add(i, n); err != nil {
			return nil, err
		}
	}
	c, err := model.NewCluster(b.types, b.nodes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// typeTable returns the catalog with f's gpu_types applied, by name.
func (f *File) typeTable(file string) (map[string]model.GPUType, error) {
	known := map[string]model.GPUType{}
	for _, t := range Catalog() {
		known[t.Name] = t
	}
	declared := map[string]int{}
	for i, s := range f.GPUTypes {
		field := "gpu_types[" + strconv.Itoa(i) + "]"
		t, err := s.apply(known)
		if err != nil {
			return nil, fieldError(file, field+err.field, "%s", err.msg)
		}
		if j, dup := declared[t.Name]; dup {
			return nil, fieldError(file, field+".name", "type %q already declared by gpu_types[%d]", t.Name, j)
		}
		declared[t.Name] = i
		known[t.Name] = t
	}
	return known, nil
}

// specError is a problem with one field of an entry; field is relative to
// the entry, e.g. ".mem_mib", or empty for the entry as a whole.
type specError struct {
	field, msg string
}

// apply returns the type that s describes, starting from the entry of the
// same name in known, if any.
func (s GPUTypeSpec) apply(known map[string]model.GPUType) (model.GPUType, *specError) {
	name := strings.ToLower(s.Name)
	if msg := checkTypeName(name); msg != "" {
		return model.GPUType{}, &specError{".name", msg}
	}
	t, ok := known[name]
	if !ok && (s.MemMiB == nil || s.TFLOPS == nil) {
		return model.GPUType{}, &specError{"", fmt.Sprintf("type %q is not in the catalog, so mem_mib and tflops are required", name)}
	}
	t.Name = name
	if s.MemMiB != nil {
		if *s.MemMiB <= 0 {
			return model.GPUType{}, &specError{".mem_mib", fmt.Sprintf("must be positive, got %d", *s.MemMiB)}
		}
		t.MemMiB = *s.MemMiB
	}
	if s.TFLOPS != nil {
		if v := *s.TFLOPS; v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return model.GPUType{}, &specError{".tflops", fmt.Sprintf("must be a positive number, got %v", v)}
		}
		t.TFLOPS = *s.TFLOPS
	}
	return t, nil
}

// checkTypeName returns why a lower-cased GPU type name is not acceptable,
// or "". Type names appear in flags (TYPE=N,...), so '=' and ',' are out.
func checkTypeName(name string) string {
	if name == "" {
		return "must not be empty"
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Sprintf("%q: only letters, digits, '-', '_' and '.' are allowed", name)
		}
	}
	return ""
}

// checkNodeName returns why a node name is not acceptable, or "". GPU ids
// are "node/index", so '/' is out, as are spaces and other punctuation.
func checkNodeName(name string) string {
	if name == "" {
		return "must not be empty"
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Sprintf("%q: only letters, digits, '-', '_' and '.' are allowed", name)
		}
	}
	return ""
}

// fieldError formats an error about one field of a cluster file.
func fieldError(file, field, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", file, field, fmt.Sprintf(format, args...))
}
