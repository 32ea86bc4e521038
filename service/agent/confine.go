package agent

import (
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/confine"
	"github.com/gpusched/gpusched/service/machine"
	"github.com/gpusched/gpusched/service/shim"
)

// Confine says whether an agent runs each replica in a cgroup of its own
// (docs/SECURITY.md, "On the nodes").
type Confine int

const (
	// ConfineOff runs replicas unconfined: the zero value of Config and
	// `gpusched dev` without --auth.
	ConfineOff Confine = iota
	// ConfineAuto confines replicas when the agent can make cgroups (it
	// runs as root on a writable cgroup v2 or v1 hierarchy) and otherwise
	// runs them unconfined, saying so at start: the default of `gpusched
	// agent`.
	ConfineAuto
	// ConfineRequire confines replicas; an agent that cannot does not
	// start.
	ConfineRequire
)

// DefaultPidsMax bounds the tasks (processes and threads) of each
// replica when Config.PidsMax is 0.
const DefaultPidsMax = 32768

// setupConfinement chooses, once at start, whether and how replicas are
// confined, and says so in the log; it fails only under ConfineRequire.
func (a *Agent) setupConfinement() error {
	if a.cfg.Confine == ConfineOff {
		a.log.Info("replicas run unconfined: cgroups are off")
		return nil
	}
	h, err := confine.Detect(a.boxParent())
	if err != nil {
		if a.cfg.Confine == ConfineRequire {
			return fmt.Errorf("confinement required (--confine require), but replicas cannot be confined: %w", err)
		}
		a.log.Warn("replicas run unconfined: no cgroups for them (--confine require would refuse to start)", "why", err)
		return nil
	}
	a.host, a.minors = h, machine.GPUMinors()
	mem := "none"
	if a.cfg.DefaultMemory > 0 {
		mem = model.FormatAmount(model.ResourceMemory, a.cfg.DefaultMemory)
	}
	a.log.Info("replicas run in cgroups of their own", "cgroup", h.Version.String(), "parent", h.Parent,
		"default_memory", mem, "pids_max", a.cfg.PidsMax, "devices", a.cfg.DeviceDir)
	return nil
}

// boxParent is the cgroup, relative to the agent's own, under which its
// replicas' cgroups go: gpusched/<node>.<hash of the data directory>, so
// that two agents on one machine (tests, a second data directory) never
// share one.
func (a *Agent) boxParent() string {
	h := fnv.New32a()
	h.Write([]byte(a.cfg.DataDir))
	return fmt.Sprintf("gpusched/%s.%08x", strings.ReplaceAll(a.cfg.Name, "/", "_"), h.Sum32())
}

// limitsOf are the cgroup limits of replica spec: its Limits (CPU, and
// memory or else Config.DefaultMemory), Config.PidsMax tasks, and only
// its own GPUs among the node's devices.
func (a *Agent) limitsOf(spec api.Replica) (confine.Limits, error) {
	lim := confine.Limits{MemoryBytes: a.cfg.DefaultMemory, Pids: a.cfg.PidsMax}
	r, err := api.ParseResources("limits", spec.Limits)
	if err != nil {
		return lim, err
	}
	lim.CPUMillis = r[model.ResourceCPU]
	if m := r[model.ResourceMemory]; m > 0 {
		lim.MemoryBytes = m
	}
	if lim.Devices, err = confine.DeviceRules(a.cfg.DeviceDir, a.deviceNumbers(spec.GPUs)); err != nil {
		return lim, err
	}
	return lim, nil
}

// deviceNumbers are the N of the /dev/nvidiaN nodes of GPUs (indices):
// their minor numbers where NVML told them, else the indices.
func (a *Agent) deviceNumbers(gpus []int) []int {
	out := make([]int, len(gpus))
	for i, g := range gpus {
		out[i] = g
		if m, ok := a.minors[g]; ok {
			out[i] = m
		}
	}
	return out
}

// makeBox makes replica p's cgroup, records it in p's directory and
// returns the shim's arguments that put the command into it — none when
// replicas are not confined — and, on cgroup v1, the entry that moves the
// shim in as it starts.
func (a *Agent) makeBox(p *proc) ([]string, *boxEntry, error) {
	if a.host.Version == confine.None {
		return nil, nil, nil
	}
	lim, err := a.limitsOf(p.spec)
	if err != nil {
		return nil, nil, fmt.Errorf("cgroup: %w", err)
	}
	b, err := a.host.Create(p.spec.ID, lim)
	if err != nil {
		return nil, nil, err
	}
	if err := b.Save(filepath.Join(p.dir, shim.BoxFile)); err != nil {
		_ = b.Remove()
		return nil, nil, fmt.Errorf("cgroup: %w", err)
	}
	if b.Version != confine.V1 {
		return []string{"--cgroup"}, nil, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		_ = b.Remove()
		return nil, nil, fmt.Errorf("cgroup pipe: %w", err)
	}
	return []string{"--cgroup", "--cgroup-fd", "4"}, &boxEntry{box: b, r: r, w: w, log: a.log}, nil
}

// boxEntry moves a replica's shim into its v1 cgroup while the shim's
// program loads, then closes the shim's --cgroup-fd pipe; the shim waits
// for that before it starts the command in the cgroup (confine.Box.Start):
// the RCU grace period a move into a v1 cgroup waits for then passes
// beside the shim's start, not after it.
type boxEntry struct {
	box  confine.Box
	r, w *os.File // the shim's end (its file descriptor 4), the agent's
	log  *slog.Logger
}

// done moves process pid (the shim; 0: it did not start) into the cgroup
// and closes the pipe. Nil-safe.
func (e *boxEntry) done(pid int) {
	if e == nil {
		return
	}
	e.r.Close() // the shim has its own copy
	if pid > 0 {
		if err := e.box.Enter(pid); err != nil {
			e.log.Debug("shim not moved into its cgroup; it moves itself", "pid", pid, "err", err)
		}
	}
	e.w.Close()
}

// boxOf returns the cgroup recorded in replica directory dir, if any.
func (a *Agent) boxOf(dir string) (confine.Box, bool) {
	b, found, err := confine.Load(filepath.Join(dir, shim.BoxFile))
	if err != nil {
		a.log.Warn("unreadable cgroup record", "dir", dir, "err", err)
	}
	return b, found
}

// killBox sends SIGKILL to every process of replica p's cgroup, those
// that left its process group included.
func (a *Agent) killBox(p *proc) {
	if b, ok := a.boxOf(p.dir); ok {
		if err := b.Kill(); err != nil {
			a.log.Warn("kill the replica's cgroup", "replica", p.spec.ID, "err", err)
		}
	}
}

// dropBox removes the cgroup of replica p, which has ended; processes
// still in it (the replica was lost with its shim) are killed first.
func (a *Agent) dropBox(p *proc) {
	b, ok := a.boxOf(p.dir)
	if !ok || !b.Exists() {
		return
	}
	if !b.Empty() {
		_ = b.Kill()
	}
	var err error
	for range 50 {
		if err = b.Remove(); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.log.Warn("cannot remove the replica's cgroup", "replica", p.spec.ID, "err", err)
}

// updateBox sets the limits of a running replica whose work entry changed
// (a live resize: new GPUs, new limits).
func (a *Agent) updateBox(p *proc, spec api.Replica) {
	b, ok := a.boxOf(p.dir)
	if !ok {
		return
	}
	lim, err := a.limitsOf(spec)
	if err == nil {
		b, err = b.Update(lim)
	}
	if err == nil {
		err = b.Save(filepath.Join(p.dir, shim.BoxFile))
	}
	if err != nil {
		a.log.Warn("update the replica's cgroup", "replica", spec.ID, "err", err)
	}
}
