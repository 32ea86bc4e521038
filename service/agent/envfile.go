package agent

import (
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/shim"
)

// envFile is the replica's current environment, one KEY=VALUE line per
// variable: GPUSCHED_ENV_FILE.
const envFile = "env"

// replicaEnv is the environment the agent gives a replica on top of its
// own: the replica's Env (the spec's env and the membership variables),
// CUDA_VISIBLE_DEVICES from its GPUs and GPUSCHED_SERVER (the agent's
// server) when Env lacks them, and the agent's GPUSCHED_* variables, as
// NAME=value strings in that order.
func (a *Agent) replicaEnv(spec api.Replica, dir string) []string {
	var env []string
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		env = append(env, k+"="+spec.Env[k])
	}
	if _, ok := spec.Env["CUDA_VISIBLE_DEVICES"]; !ok {
		ids := make([]string, len(spec.GPUs))
		for i, g := range spec.GPUs {
			ids[i] = strconv.Itoa(g)
		}
		env = append(env, "CUDA_VISIBLE_DEVICES="+strings.Join(ids, ","))
	}
	if _, ok := spec.Env["GPUSCHED_SERVER"]; !ok { // for `gpusched hostfile` and other clients
		env = append(env, "GPUSCHED_SERVER="+a.cfg.Server)
	}
	if _, ok := spec.Env["GPUSCHED_CA"]; !ok && a.cfg.CAFile != "" {
		env = append(env, "GPUSCHED_CA="+a.cfg.CAFile)
	}
	return append(env,
		"GPUSCHED_NODE="+a.cfg.Name,
		"GPUSCHED_REPLICA_ID="+spec.ID,
		"GPUSCHED_REPLICA_DIR="+dir,
		"GPUSCHED_HOSTFILE="+filepath.Join(dir, shim.HostsFile),
		"GPUSCHED_MPI_HOSTFILE="+filepath.Join(dir, shim.HostfileFile),
		"GPUSCHED_HOSTS="+shim.HostsFlag(shim.StaticHosts(spec.HostFile, a.cfg.Name)),
		"GPUSCHED_HOST_DISCOVERY_SCRIPT="+filepath.Join(dir, shim.DiscoverFile),
		"GPUSCHED_PROGRESS_FILE="+shim.ProgressPath(dir),
		"GPUSCHED_ENV_FILE="+filepath.Join(dir, envFile),
	)
}

// envText renders env (NAME=value strings; a later one wins) as sorted
// NAME=value lines. A value holding a newline is left out: it cannot be
// written on one line.
func envText(env []string) string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !strings.ContainsAny(m[k], "\n\r") {
			b.WriteString(k + "=" + m[k] + "\n")
		}
	}
	return b.String()
}

// writeEnvFile writes the replica's environment file into dir, atomically:
// readable by the agent's account alone (it holds the job token), or
// handed to acct, the replica's account, when that is not nil.
func (a *Agent) writeEnvFile(spec api.Replica, dir string, acct *account) error {
	path := filepath.Join(dir, envFile)
	if acct == nil {
		return writeFileAtomic(path, []byte(envText(a.replicaEnv(spec, dir))), 0o600)
	}
	return writeFileOwned(path, []byte(envText(a.replicaEnv(spec, dir))), acct)
}

// change is a running replica whose work entry changed.
type change struct {
	p *proc
	// notify: the membership generation changed and the replica is node
	// rank 0: its process group leader gets SIGUSR1.
	notify bool
}

// applyChange rewrites a changed replica's host files and environment
// file, saves its record and, for a new generation on node rank 0, sends
// SIGUSR1 to its process group leader when the leader handles that signal
// (its default action would end the process). The process is never
// restarted.
func (a *Agent) applyChange(c change) {
	p := c.p
	spec := read(a.reps, p, func(p *proc) api.Replica { return p.spec })
	if err := shim.WriteHostFiles(p.dir, spec.HostFile, a.cfg.Name); err != nil {
		a.log.Warn("update host files", "replica", spec.ID, "err", err)
	}
	// A replica adopted from an older agent's record has no owner: it runs
	// as the agent, and so does its file (so does one whose account is gone).
	acct, err := a.accountOf(spec.User)
	if err != nil {
		a.log.Warn("environment file kept by the agent", "replica", spec.ID, "err", err)
	}
	if err := a.writeEnvFile(spec, p.dir, acct); err != nil {
		a.log.Warn("update environment file", "replica", spec.ID, "err", err)
	}
	a.updateBox(p, spec)
	a.save(p)
	gen := spec.Env["GPUSCHED_GENERATION"]
	if !c.notify {
		a.log.Info("replica updated", "replica", spec.ID, "generation", gen, "gpus", spec.GPUs)
		return
	}
	pid := read(a.reps, p, func(p *proc) int {
		if p.status.Phase != api.ReplicaRunning {
			return 0
		}
		return p.status.PID
	})
	switch {
	case pid <= 1:
		a.log.Info("replica updated", "replica", spec.ID, "generation", gen, "gpus", spec.GPUs)
	case !shim.Catches(pid, syscall.SIGUSR1):
		a.log.Info("replica updated; not signalled: its process does not handle SIGUSR1", "replica", spec.ID,
			"generation", gen, "gpus", spec.GPUs, "pid", pid)
	default:
		err := syscall.Kill(pid, syscall.SIGUSR1)
		a.log.Info("replica updated; SIGUSR1 sent", "replica", spec.ID, "generation", gen, "gpus", spec.GPUs,
			"pid", pid, "err", err)
	}
}
