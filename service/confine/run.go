package confine

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
	"golang.org/x/sys/unix"
)

// Start starts cmd as a member of b, so that every process it forks is one
// too. On v2 the kernel clones it into the box (CLONE_INTO_CGROUP); on v1
// the calling process steps into the box for the fork, unless it is a
// member already (Enter), and back into its own cgroups right after, so it
// is a member for that moment only. The caller must not start other
// processes meanwhile.
//
// Moving a process into a v1 cgroup waits for an RCU grace period (several
// milliseconds, more on a busy machine) unless another move just did: an
// agent moves a shim in (Enter) while the shim's program loads, so that
// the wait is not added to the replica's start.
func (b Box) Start(cmd *exec.Cmd) error {
	if b.Version == V2 {
		return b.startV2(cmd)
	}
	home := b.Home
	if len(home) == 0 {
		var err error
		if home, err = ownPaths(slices.Collect(maps.Keys(b.Paths))); err != nil {
			return err
		}
	}
	self := os.Getpid()
	if !b.holdsSelf() {
		if err := addPid(b.Paths, self); err != nil {
			_ = addPid(home, self)
			return fmt.Errorf("enter cgroup: %w", err)
		}
	}
	err := cmd.Start()
	if lerr := addPid(home, self); lerr != nil && err == nil {
		// The command runs in the box; the caller stays in it too.
		err = fmt.Errorf("leave cgroup: %w", lerr)
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
	return err
}

// startV2 starts cmd cloned into b's directory.
func (b Box) startV2(cmd *exec.Cmd) error {
	fd, err := unix.Open(b.Paths[""], unix.O_DIRECTORY|unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open cgroup: %w", err)
	}
	defer unix.Close(fd)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	return cmd.Start()
}

// Enter moves process pid into b (v1: into each controller's directory).
func (b Box) Enter(pid int) error {
	if err := addPid(b.Paths, pid); err != nil {
		return fmt.Errorf("enter cgroup: %w", err)
	}
	return nil
}

// holdsSelf reports whether the calling process is in b's directory of
// every controller (v1).
func (b Box) holdsSelf() bool {
	own, err := cgroups.ParseCgroupFile("/proc/self/cgroup")
	if err != nil {
		return false
	}
	for c, p := range b.Paths {
		if o, ok := own[c]; !ok || o == "/" || !strings.HasSuffix(p, o) {
			return false
		}
	}
	return true
}

// ownPaths are the calling process's own v1 cgroups of controllers.
func ownPaths(controllers []string) (map[string]string, error) {
	out := make(map[string]string, len(controllers))
	for _, c := range controllers {
		own, err := cgroups.GetOwnCgroupPath(c)
		if err != nil {
			return nil, fmt.Errorf("own %s cgroup: %w", c, err)
		}
		if !filepath.IsAbs(own) {
			return nil, fmt.Errorf("own %s cgroup %q: not an absolute path", c, own)
		}
		out[c] = own
	}
	return out, nil
}

// addPid moves process pid into every directory of paths.
func addPid(paths map[string]string, pid int) error {
	var errs []error
	for _, p := range paths {
		if err := cgroups.WriteCgroupProc(p, pid); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Kill sends SIGKILL to every member of b, those that left the process
// group or session included: on v2 through cgroup.kill (Linux 5.14),
// otherwise by freezing the box, signalling every member and thawing it,
// so that no member forks meanwhile. It returns once the signals are sent;
// the members are gone soon after.
func (b Box) Kill() error {
	if b.Version == V2 {
		err := cgroups.WriteFile(b.Paths[""], "cgroup.kill", "1")
		if err == nil || errors.Is(err, os.ErrNotExist) && !b.Exists() {
			return nil
		}
	}
	m, err := b.manager(nil)
	if err != nil {
		return err
	}
	frozen := m.Freeze(cgroups.Frozen) == nil
	pids, err := b.Pids()
	for _, pid := range pids {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	if frozen {
		if terr := m.Freeze(cgroups.Thawed); terr != nil && err == nil {
			err = fmt.Errorf("thaw cgroup: %w", terr)
		}
	}
	return err
}

// Signal sends sig to every member of b.
func (b Box) Signal(sig syscall.Signal) {
	pids, _ := b.Pids()
	for _, pid := range pids {
		_ = unix.Kill(pid, sig)
	}
}

// Empty reports whether b has no member left (or is gone).
func (b Box) Empty() bool {
	pids, err := b.Pids()
	return err == nil && len(pids) == 0
}

// OOMKills is how many of b's members the kernel killed for want of
// memory (memory.events oom_kill on v2, memory.oom_control oom_kill on
// v1).
func (b Box) OOMKills() (uint64, error) {
	var (
		n   uint64
		err error
	)
	switch b.Version {
	case V2:
		n, err = fs2.OOMKillCount(b.Paths[""])
	case V1:
		n, err = fs.OOMKillCount(b.Paths["memory"])
	default:
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("out-of-memory kills: %w", err)
	}
	return n, nil
}

// Stats are what a box used.
type Stats struct {
	// CPU is the CPU time its members used.
	CPU time.Duration
	// Throttled is how many CFS periods its members were held back by the
	// CPU quota.
	Throttled uint64
	// Memory is the memory it holds now, and MaxMemory the most it held
	// (v1; 0 on v2 kernels without memory.peak).
	Memory, MaxMemory uint64
	// CPULimit is its CPU quota in millicores, as the kernel has it
	// (cpu.max, cpu.cfs_quota_us ÷ cpu.cfs_period_us); 0 when none.
	CPULimit int64
}

// Stats reads b's usage.
func (b Box) Stats() (Stats, error) {
	m, err := b.manager(nil)
	if err != nil {
		return Stats{}, err
	}
	s, err := m.GetStats()
	if err != nil {
		return Stats{}, fmt.Errorf("cgroup stats: %w", err)
	}
	limit, err := b.cpuLimit()
	if err != nil {
		return Stats{}, err
	}
	return Stats{CPU: time.Duration(s.CpuStats.CpuUsage.TotalUsage), Throttled: s.CpuStats.ThrottlingData.ThrottledPeriods,
		Memory: s.MemoryStats.Usage.Usage, MaxMemory: s.MemoryStats.Usage.MaxUsage, CPULimit: limit}, nil
}

// cpuLimit reads b's CPU quota in millicores; 0 when unlimited.
func (b Box) cpuLimit() (int64, error) {
	var quota, period string
	if b.Version == V2 {
		s, err := cgroups.ReadFile(b.Paths[""], "cpu.max")
		if err != nil {
			return 0, fmt.Errorf("cgroup cpu.max: %w", err)
		}
		quota, period, _ = strings.Cut(strings.TrimSpace(s), " ")
	} else {
		q, err := cgroups.ReadFile(b.Paths["cpu"], "cpu.cfs_quota_us")
		if err != nil {
			return 0, fmt.Errorf("cgroup cpu quota: %w", err)
		}
		p, err := cgroups.ReadFile(b.Paths["cpu"], "cpu.cfs_period_us")
		if err != nil {
			return 0, fmt.Errorf("cgroup cpu period: %w", err)
		}
		quota, period = strings.TrimSpace(q), strings.TrimSpace(p)
	}
	if quota == "max" || quota == "-1" {
		return 0, nil
	}
	q, err := strconv.ParseInt(quota, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cgroup cpu quota %q: %w", quota, err)
	}
	p, err := strconv.ParseInt(period, 10, 64)
	if err != nil || p <= 0 {
		return 0, fmt.Errorf("cgroup cpu period %q: want a positive number", period)
	}
	return q * 1000 / p, nil
}
