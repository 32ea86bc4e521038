package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/opencontainers/cgroups"
	// The devices package makes the managers apply device rules (it sets
	// cgroups.DevicesSetV1 and DevicesSetV2).
	_ "github.com/opencontainers/cgroups/devices"
	devcfg "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"

	"github.com/gpusched/gpusched/core/model"
)

// Version is the cgroup interface a node's boxes use.
type Version int

const (
	// None: no box; replicas run unconfined.
	None Version = iota
	// V1: the legacy hierarchies, one per controller
	// (/sys/fs/cgroup/memory, cpu, pids, devices, freezer, ...).
	V1
	// V2: the unified hierarchy (/sys/fs/cgroup is cgroup2).
	V2
)

// String names v as the agent's start log says it.
func (v Version) String() string {
	switch v {
	case V1:
		return "cgroup v1"
	case V2:
		return "cgroup v2"
	}
	return "none"
}

// MarshalText writes v as "v1", "v2" or "none".
func (v Version) MarshalText() ([]byte, error) {
	switch v {
	case V1:
		return []byte("v1"), nil
	case V2:
		return []byte("v2"), nil
	}
	return []byte("none"), nil
}

// UnmarshalText reads "v1", "v2" or "none".
func (v *Version) UnmarshalText(b []byte) error {
	switch string(b) {
	case "v1":
		*v = V1
	case "v2":
		*v = V2
	case "none", "":
		*v = None
	default:
		return fmt.Errorf("cgroup version %q: want v1, v2 or none", b)
	}
	return nil
}

// v1Controllers are the v1 controllers a box needs: limits, accounting,
// devices and the freezer that Kill uses.
var v1Controllers = []string{"cpu", "cpuacct", "memory", "pids", "devices", "freezer"}

// Limits are what one box may use. Zero fields are not limited.
type Limits struct {
	// CPUMillis is the CPU time the box may use per wall-clock second, in
	// millicores (a quota per 100 ms period).
	CPUMillis int64 `json:"cpu_millis,omitempty"`
	// MemoryBytes is its memory, page cache included; beyond it the
	// kernel reclaims, then kills a member (out of memory).
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// Pids is how many tasks (processes and threads) it may hold.
	Pids int64 `json:"pids,omitempty"`
	// Devices are the device rules (DeviceRules); nil leaves devices
	// alone.
	Devices []*devcfg.Rule `json:"devices,omitempty"`
}

// cpuPeriod is the CFS period of a CPU quota, in microseconds.
const cpuPeriod = 100_000

// resources are l as the cgroup managers take them.
func (l Limits) resources() *cgroups.Resources {
	r := &cgroups.Resources{Memory: l.MemoryBytes, Devices: l.Devices, SkipDevices: l.Devices == nil}
	if l.CPUMillis > 0 {
		r.CpuPeriod = cpuPeriod
		r.CpuQuota = max(l.CPUMillis*cpuPeriod/1000, 1000) // the kernel's least quota is 1 ms
	}
	if l.Pids > 0 {
		r.PidsLimit = &l.Pids
	}
	return r
}

// Box is one replica's cgroup: plain data, written into the replica's
// directory for its shim and for a restarted agent.
type Box struct {
	Version Version `json:"version"`
	// Paths are its directories: by controller on v1, the one unified
	// directory under the key "" on v2.
	Paths map[string]string `json:"paths"`
	// MemoryBytes is its memory limit (for the out-of-memory message); 0
	// when none.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// Home are the cgroups (v1, by controller) of the agent that made the
	// box, which its shim shares: Start returns the shim there after the
	// fork. Empty: the shim looks its own up.
	Home map[string]string `json:"home,omitempty"`
}

// Host is where a node makes its boxes: a version and a parent cgroup.
type Host struct {
	Version Version
	// Parent is the cgroup, relative to the agent's own (v1: per
	// controller; v2: its parent's, the agent's slice), under which boxes
	// are made, e.g. "gpusched/n1".
	Parent string
	// home are the agent's own v1 cgroups (Box.Home), looked up once.
	home map[string]string
}

// config is the manager configuration of box name under h.
func (h Host) config(name string, l Limits) *cgroups.Cgroup {
	return &cgroups.Cgroup{Parent: h.Parent, Name: name, Resources: l.resources()}
}

// manager returns the cgroup manager of b, with resources r (nil: none).
func (b Box) manager(r *cgroups.Resources) (cgroups.Manager, error) {
	if r == nil {
		r = &cgroups.Resources{SkipDevices: true}
	}
	cg := &cgroups.Cgroup{Resources: r}
	switch b.Version {
	case V1:
		return fs.NewManager(cg, maps.Clone(b.Paths)) // the manager deletes from its map
	case V2:
		return fs2.NewManager(cg, b.Paths[""])
	}
	return nil, errors.New("no cgroup")
}

// Create makes box name (a single path element, e.g. the replica's ID)
// under h's parent with limits l. An empty box of that name, left by an
// earlier run, is removed first; one that holds processes is an error.
func (h Host) Create(name string, l Limits) (Box, error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return Box{}, fmt.Errorf("cgroup name %q: want a single path element", name)
	}
	if h.Version == None {
		return Box{}, errors.New("no cgroup")
	}
	cg := h.config(name, l)
	var (
		m   cgroups.Manager
		err error
	)
	if h.Version == V2 {
		m, err = fs2.NewManager(cg, "")
	} else {
		m, err = fs.NewManager(cg, nil)
	}
	if err != nil {
		return Box{}, fmt.Errorf("cgroup %s: %w", name, err)
	}
	b := Box{Version: h.Version, Paths: m.GetPaths(), MemoryBytes: l.MemoryBytes, Home: h.home}
	if h.Version == V1 {
		b.Paths = only(b.Paths, v1Controllers)
		if l.Devices == nil { // the manager makes no devices cgroup then
			delete(b.Paths, "devices")
		}
		if m, err = b.manager(cg.Resources); err != nil {
			return Box{}, fmt.Errorf("cgroup %s: %w", name, err)
		}
	}
	if err := b.Remove(); err != nil && !b.Empty() { // a stale box of an earlier run
		return Box{}, fmt.Errorf("cgroup %s exists and holds processes", name)
	}
	if err := m.Apply(-1); err != nil {
		_ = b.Remove()
		return Box{}, fmt.Errorf("create cgroup %s: %w", name, err)
	}
	if err := m.Set(cg.Resources); err != nil {
		_ = b.Remove()
		return Box{}, fmt.Errorf("limit cgroup %s: %w", name, err)
	}
	return b, nil
}

// only keeps the controllers of paths that are in names.
func only(paths map[string]string, names []string) map[string]string {
	out := make(map[string]string, len(names))
	for k, v := range paths {
		if slices.Contains(names, k) {
			out[k] = v
		}
	}
	return out
}

// Update sets b's limits to l (a live resize: new GPUs, new requests) and
// returns the box with its new memory limit.
func (b Box) Update(l Limits) (Box, error) {
	r := l.resources()
	m, err := b.manager(r)
	if err != nil {
		return b, err
	}
	if err := m.Set(r); err != nil {
		return b, fmt.Errorf("update cgroup: %w", err)
	}
	b.MemoryBytes = l.MemoryBytes
	return b, nil
}

// Remove removes b's directories; a box already gone is no error, a box
// whose processes still run is.
func (b Box) Remove() error {
	var errs []error
	for _, p := range b.Paths {
		if err := cgroups.RemovePath(p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove cgroup: %w", err)
	}
	return nil
}

// Exists reports whether b's directories are there.
func (b Box) Exists() bool {
	for _, p := range b.Paths {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// procsDir is the directory whose cgroup.procs lists b's members.
func (b Box) procsDir() string {
	if b.Version == V2 {
		return b.Paths[""]
	}
	for _, c := range []string{"freezer", "pids", "memory", "cpu", "devices"} {
		if p, ok := b.Paths[c]; ok {
			return p
		}
	}
	return ""
}

// Pids lists b's member processes, those of sub-cgroups included; none
// when b is gone.
func (b Box) Pids() ([]int, error) {
	dir := b.procsDir()
	if dir == "" {
		return nil, nil
	}
	pids, err := cgroups.GetAllPids(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cgroup members: %w", err)
	}
	return pids, nil
}

// Save writes b as JSON to path (mode 0600), atomically.
func (b Box) Save(path string) error {
	data, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("encode cgroup: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Load reads the box saved at path; found is false when there is none.
func Load(path string) (b Box, found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Box{}, false, nil
	}
	if err != nil {
		return Box{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return Box{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	if b.Version == None || len(b.Paths) == 0 {
		return Box{}, false, fmt.Errorf("read %s: no cgroup in it", path)
	}
	for _, p := range b.Paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return Box{}, false, fmt.Errorf("read %s: cgroup path %q is not a clean absolute path", path, p)
		}
	}
	return b, true, nil
}

// OOMMessage says that b ran out of memory, naming its limit as the
// kernel's file does: "out of memory (memory.max 256Mi)".
func (b Box) OOMMessage() string {
	if b.MemoryBytes <= 0 {
		return "out of memory"
	}
	file := "memory.max"
	if b.Version == V1 {
		file = "memory.limit_in_bytes"
	}
	return fmt.Sprintf("out of memory (%s %s)", file, model.FormatAmount(model.ResourceMemory, b.MemoryBytes))
}
