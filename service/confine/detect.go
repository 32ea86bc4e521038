package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
	"golang.org/x/sys/unix"
)

// Detect returns the Host whose boxes go under parent (relative to the
// agent's own cgroup, e.g. "gpusched/n1"), once it has made and removed a
// box there with every limit set; or, when boxes cannot be made, an error
// that says why (not root, no usable hierarchy, a hierarchy read-only or
// without a controller). It chooses cgroup v2 when /sys/fs/cgroup is
// cgroup2, else v1 when memory, cpu, cpuacct, pids, devices and freezer
// are mounted.
func Detect(parent string) (Host, error) {
	if uid := os.Geteuid(); uid != 0 {
		return Host{}, fmt.Errorf("the agent runs as uid %d, not root, and cannot make cgroups", uid)
	}
	h := Host{Version: V1, Parent: parent}
	if cgroups.IsCgroup2UnifiedMode() {
		h.Version = V2
	} else if err := checkV1(); err != nil {
		return Host{}, err
	} else if h.home, err = ownPaths(v1Controllers); err != nil {
		return Host{}, err
	}
	probe := "probe-" + strconv.Itoa(os.Getpid())
	b, err := h.Create(probe, Limits{CPUMillis: 1000, MemoryBytes: 64 << 20, Pids: 16, Devices: baseRules()})
	if err != nil {
		return Host{}, fmt.Errorf("%s: %w", h.Version, err)
	}
	if err := b.Remove(); err != nil {
		return Host{}, fmt.Errorf("%s: %w", h.Version, err)
	}
	return h, nil
}

// checkV1 checks that every controller a v1 box needs is mounted.
func checkV1() error {
	mounts, err := cgroups.GetCgroupMounts(false)
	if err != nil {
		return fmt.Errorf("cgroup mounts: %w", err)
	}
	var have []string
	for _, m := range mounts {
		have = append(have, m.Subsystems...)
	}
	if len(have) == 0 {
		return errors.New("no cgroup hierarchy is mounted (neither cgroup2 on /sys/fs/cgroup nor v1 controllers)")
	}
	for _, c := range v1Controllers {
		if !slices.Contains(have, c) {
			return fmt.Errorf("cgroup v1: controller %s is not mounted", c)
		}
	}
	return nil
}

// Tidy removes h's parent cgroup, and those above it up to the agent's
// own, where they are empty: a cgroup that still holds boxes (replicas
// left running) or processes stays.
func (h Host) Tidy() {
	var (
		m   cgroups.Manager
		err error
	)
	cg := h.config("x", Limits{})
	switch h.Version {
	case V1:
		m, err = fs.NewManager(cg, nil)
	case V2:
		m, err = fs2.NewManager(cg, "")
	default:
		return
	}
	if err != nil {
		return
	}
	levels := strings.Count(filepath.Clean(h.Parent), "/") + 1
	for _, p := range m.GetPaths() {
		dir := filepath.Dir(p)
		for range levels {
			if unix.Rmdir(dir) != nil {
				break
			}
			dir = filepath.Dir(dir)
		}
	}
}
