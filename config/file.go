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

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/power"
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
	// Storage lists the data storage devices (seed 002). Optional.
	Storage []StorageSpec `json:"storage,omitempty"`
	// Network sets the rack topology's links and upload figures. Optional.
	Network *NetworkSpec `json:"network,omitempty"`
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
	// Power overrides the type's power figures (docs/ENERGY.md); nil keeps
	// the defaults of package power.
	Power *GPUPowerSpec `json:"power,omitempty"`
}

// GPUPowerSpec is the power block of a gpu_types entry: the draw of one GPU
// of the type. A field left out keeps the default of package power; a type
// without defaults must give both.
type GPUPowerSpec struct {
	// IdleW is the draw of an idle GPU in watts, ≥ 0.
	IdleW *float64 `json:"idle_w,omitempty"`
	// MaxW is the draw at full utilisation (board power) in watts, > 0 and
	// ≥ IdleW.
	MaxW *float64 `json:"max_w,omitempty"`
}

// NodePowerSpec is the power block of a nodes entry, for each of its nodes.
// A field left out keeps the default of package power.
type NodePowerSpec struct {
	// BaseW is the node's draw without its GPUs in watts, ≥ 0.
	BaseW *float64 `json:"base_w,omitempty"`
	// ContentionKnee is the load (busy GPUs ÷ node GPUs) above which jobs on
	// the node slow down, in [0, 1].
	ContentionKnee *float64 `json:"contention_knee,omitempty"`
	// ContentionSlowdown is the fraction of speed jobs lose on a full node,
	// in [0, 1).
	ContentionSlowdown *float64 `json:"contention_slowdown,omitempty"`
	// Sleeps false keeps the nodes on while idle; nil or true makes them
	// power-managed (the default): idle for SleepAfterS, they suspend
	// themselves and draw SleepW until a job wakes them, which takes WakeS.
	Sleeps *bool `json:"sleeps,omitempty"`
	// SleepW is the draw of a suspended node in watts, ≥ 0.
	SleepW *float64 `json:"sleep_w,omitempty"`
	// SleepAfterS is how long an idle node stays on before it suspends
	// itself, in seconds, ≥ 0.
	SleepAfterS *float64 `json:"sleep_after_s,omitempty"`
	// WakeS is how long a suspended node takes to wake up, in seconds, ≥ 0.
	WakeS *float64 `json:"wake_s,omitempty"`
}

// DeclaresContention reports whether the power block of some nodes entry
// of f gives contention_knee or contention_slowdown: the cluster's nodes
// then slow co-located jobs down, and gpusched sim applies contention
// unless told otherwise.
func (f *File) DeclaresContention() bool {
	for _, s := range f.Nodes {
		if p := s.Power; p != nil && (p.ContentionKnee != nil || p.ContentionSlowdown != nil) {
			return true
		}
	}
	return false
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
	// Power overrides the power model of the nodes (docs/ENERGY.md); nil
	// keeps the defaults of package power.
	Power *NodePowerSpec `json:"power,omitempty"`
	// Rack is the nodes' rack, for the rack topology; empty: none.
	Rack string `json:"rack,omitempty"`
	// Links override the nodes' links to storage devices.
	Links []NodeLinkSpec `json:"links,omitempty"`
	// CPU is each node's allocatable CPU: cores as a number or a quantity
	// ("64", "500m"); CPUs is the same under the key cpus (give one). nil:
	// not modelled.
	CPU  *Amount `json:"cpu,omitempty"`
	CPUs *Amount `json:"cpus,omitempty"`
	// Memory is each node's allocatable memory: bytes as a number or a
	// quantity ("512Gi"); nil: not modelled.
	Memory *Amount `json:"memory,omitempty"`
	// Pods is how many replicas each node may run at once; nil: no limit.
	Pods *Amount `json:"pods,omitempty"`
	// Resources gives any other resource of each node by name (e.g.
	// "rdma/hca": 4, "ephemeral-storage": "1Ti"); a resource that some
	// entries give and others do not is one those others have none of.
	Resources map[string]Amount `json:"resources,omitempty"`
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
// name, power)`. name is used only in error messages.
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
	if err := f.checkPower(name); err != nil {
		return nil, err
	}
	if err := f.checkNetwork(name); err != nil {
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
	if err := checkDeclared(name, b.caps); err != nil {
		return nil, err
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

// Power returns the power description of c, the cluster that f.Cluster
// built: per GPU type the defaults of package power with the file's
// gpu_types power blocks applied, per node the defaults with its entry's
// power block applied. A GPU type with neither defaults nor a complete power
// block is an error. name is used only in error messages.
func (f *File) Power(name string, c *model.Cluster) (*power.Cluster, error) {
	p, missing, err := f.PartialPower(name, c)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fieldError(name, f.typeField(missing[0])+".power", "type %q has no default power figures, so idle_w and max_w are required", missing[0])
	}
	return p, nil
}

// PartialPower is Power for a cluster whose GPU types may lack power
// figures: it returns the description with a zero GPUPower (which does not
// validate) for every type that has neither defaults nor a complete power
// block, and the names of those types in the cluster's order. The nodes'
// descriptions are complete, so node contention can be modelled without
// energy. Other problems are errors, as in Power.
func (f *File) PartialPower(name string, c *model.Cluster) (*power.Cluster, []string, error) {
	types, err := f.typePower(name)
	if err != nil {
		return nil, nil, err
	}
	p := &power.Cluster{Types: make([]power.GPUPower, len(c.Types))}
	var missing []string
	for t, typ := range c.Types {
		g, ok := types[typ.Name]
		if !ok {
			missing = append(missing, typ.Name)
		}
		p.Types[t] = g
	}
	if p.Nodes, err = f.nodesPower(name, c); err != nil {
		return nil, nil, err
	}
	return p, missing, nil
}

// nodesPower returns the power model of every node of c, the cluster that
// f.Cluster built.
func (f *File) nodesPower(name string, c *model.Cluster) ([]power.NodePower, error) {
	nodes := make([]power.NodePower, 0, len(c.Nodes))
	for i, s := range f.Nodes {
		field := "nodes[" + strconv.Itoa(i) + "]"
		np, serr := s.nodePower()
		if serr != nil {
			return nil, fieldError(name, field+".power"+serr.field, "%s", serr.msg)
		}
		count := 1
		if s.Count != nil {
			count = *s.Count
		}
		for k := range count {
			n := len(nodes)
			if n >= len(c.Nodes) || c.Nodes[n].Name != groupNodeName(s.Name, k, count) {
				return nil, fmt.Errorf("%s: %s: the cluster was not built from this file", name, field)
			}
			nodes = append(nodes, np)
		}
	}
	if len(nodes) != len(c.Nodes) {
		return nil, fmt.Errorf("%s: the cluster was not built from this file: it has %d nodes, the file %d", name, len(c.Nodes), len(nodes))
	}
	return nodes, nil
}

// checkPower checks the power blocks of f's gpu_types and nodes entries.
func (f *File) checkPower(file string) error {
	if _, err := f.typePower(file); err != nil {
		return err
	}
	for i, s := range f.Nodes {
		if _, err := s.nodePower(); err != nil {
			return fieldError(file, "nodes["+strconv.Itoa(i)+"].power"+err.field, "%s", err.msg)
		}
	}
	return nil
}

// typePower returns the power of one GPU of every type that has figures,
// by lower-case name: the defaults of package power with the power blocks
// of f's gpu_types applied.
func (f *File) typePower(file string) (map[string]power.GPUPower, error) {
	out := map[string]power.GPUPower{}
	for _, d := range power.Defaults() {
		out[d.Name] = d.GPUPower
	}
	for i, s := range f.GPUTypes {
		if s.Power == nil {
			continue
		}
		name := strings.ToLower(s.Name)
		g, err := s.Power.apply(name, out)
		if err != nil {
			return nil, fieldError(file, "gpu_types["+strconv.Itoa(i)+"].power"+err.field, "%s", err.msg)
		}
		out[name] = g
	}
	return out, nil
}

// apply returns the power of type name: its entry in known, if any, with
// the fields of s replacing the entry's.
func (s *GPUPowerSpec) apply(name string, known map[string]power.GPUPower) (power.GPUPower, *specError) {
	g, ok := known[name]
	if !ok && (s.IdleW == nil || s.MaxW == nil) {
		return g, &specError{"", fmt.Sprintf("type %q has no default power figures, so idle_w and max_w are required", name)}
	}
	if v := s.IdleW; v != nil {
		if !(*v >= 0) || math.IsInf(*v, 0) {
			return g, &specError{".idle_w", fmt.Sprintf("must be a number ≥ 0, got %v", *v)}
		}
		g.IdleW = *v
	}
	if v := s.MaxW; v != nil {
		if !(*v > 0) || math.IsInf(*v, 0) {
			return g, &specError{".max_w", fmt.Sprintf("must be a positive number, got %v", *v)}
		}
		g.MaxW = *v
	}
	if g.MaxW < g.IdleW {
		return g, &specError{"", fmt.Sprintf("max_w %v is below idle_w %v", g.MaxW, g.IdleW)}
	}
	return g, nil
}

// nodePower returns the power model of the nodes of s: the defaults of
// package power with the fields of s.Power replacing them.
func (s NodeSpec) nodePower() (power.NodePower, *specError) {
	n := power.DefaultNode()
	p := s.Power
	if p == nil {
		return n, nil
	}
	if v := p.BaseW; v != nil {
		if !(*v >= 0) || math.IsInf(*v, 0) {
			return n, &specError{".base_w", fmt.Sprintf("must be a number ≥ 0, got %v", *v)}
		}
		n.BaseW = *v
	}
	if v := p.ContentionKnee; v != nil {
		if !(*v >= 0 && *v <= 1) {
			return n, &specError{".contention_knee", fmt.Sprintf("must be a load in [0, 1], got %v", *v)}
		}
		n.Contention.Knee = *v
	}
	if v := p.ContentionSlowdown; v != nil {
		if !(*v >= 0 && *v < 1) {
			return n, &specError{".contention_slowdown", fmt.Sprintf("must be a fraction in [0, 1), got %v", *v)}
		}
		n.Contention.Slowdown = *v
	}
	return n, p.applySleep(&n)
}

// applySleep applies the sleep keys of p to n.
func (p *NodePowerSpec) applySleep(n *power.NodePower) *specError {
	keys := []struct {
		name string
		v    *float64
		dst  *float64
	}{{"sleep_w", p.SleepW, &n.SleepW}, {"sleep_after_s", p.SleepAfterS, &n.SleepAfterS}, {"wake_s", p.WakeS, &n.WakeS}}
	for _, k := range keys {
		if k.v == nil {
			continue
		}
		if p.Sleeps != nil && !*p.Sleeps {
			return &specError{"." + k.name, "is given but sleeps is false: the node never sleeps"}
		}
		if !(*k.v >= 0) || math.IsInf(*k.v, 0) {
			return &specError{"." + k.name, fmt.Sprintf("must be a number ≥ 0, got %v", *k.v)}
		}
		*k.dst = *k.v
	}
	if p.Sleeps != nil {
		n.Sleeps = *p.Sleeps
	}
	return nil
}

// typeField names the gpu_types entry that declares type name, or
// "gpu_types" when none does.
func (f *File) typeField(name string) string {
	for i, s := range f.GPUTypes {
		if strings.ToLower(s.Name) == name {
			return "gpu_types[" + strconv.Itoa(i) + "]"
		}
	}
	return "gpu_types"
}

// groupNodeName is the name of node k of a nodes entry called name with
// count nodes.
func groupNodeName(name string, k, count int) string {
	if count > 1 {
		return name + "-" + strconv.Itoa(k)
	}
	return name
}
