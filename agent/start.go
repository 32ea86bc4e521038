package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// start starts replica p (entered in the table by reconcile) and its
// supervisor; a replica that cannot start is reported exited with exit
// code -1 and the reason.
func (a *Agent) start(p *proc) {
	now := time.Now()
	cmd, err := a.prepare(p)
	if err != nil {
		a.failStart(p, err, now)
		return
	}
	// Record the start before it happens: a restarted agent then knows the
	// replica, even if this one dies right after starting it.
	a.update(p, func(p *proc) { p.status.StartedAt = now })
	a.save(p)
	err = cmd.Start()
	if f, ok := cmd.Stdout.(*os.File); ok {
		f.Close() // the child has its own copy
	}
	if err != nil {
		a.failStart(p, err, now)
		return
	}
	pid := cmd.Process.Pid
	a.update(p, func(p *proc) { p.status.PID = pid })
	a.save(p)
	a.log.Info("replica started", "replica", p.spec.ID, "job", p.spec.Job, "pid", pid, "gpus", p.spec.GPUs)
	a.report()
	go a.supervise(p, cmd)
}

// prepare creates p's directory, host files, environment file and log file and returns the
// command to start, its output going to the log file.
func (a *Agent) prepare(p *proc) (*exec.Cmd, error) {
	spec := p.spec
	if p.dir == "" {
		return nil, fmt.Errorf("replica id %q: want letters, digits, '.', '_' or '-'", spec.ID)
	}
	if len(spec.Command) == 0 || spec.Command[0] == "" {
		return nil, errors.New("empty command")
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, fmt.Errorf("replica directory: %w", err)
	}
	if err := writeHostFiles(p.dir, spec.HostFile, a.cfg.Name); err != nil {
		return nil, fmt.Errorf("host files: %w", err)
	}
	if err := a.writeEnvFile(spec, p.dir); err != nil {
		return nil, fmt.Errorf("environment file: %w", err)
	}
	out, err := os.OpenFile(filepath.Join(p.dir, logFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Env = a.environ(p)
	switch {
	case spec.Workdir == "":
		cmd.Dir = p.dir
	case filepath.IsAbs(spec.Workdir):
		cmd.Dir = spec.Workdir
	default: // relative to the replica's directory
		cmd.Dir = filepath.Join(p.dir, spec.Workdir)
	}
	if fi, err := os.Stat(cmd.Dir); err != nil || !fi.IsDir() {
		out.Close()
		if err == nil {
			return nil, fmt.Errorf("workdir %s: not a directory", cmd.Dir)
		}
		return nil, fmt.Errorf("workdir: %w", err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, nil
}

// environ is a replica's environment: the agent's own, then replicaEnv
// (the replica's Env, which wins, and the agent's GPUSCHED_* variables).
func (a *Agent) environ(p *proc) []string {
	return append(os.Environ(), a.replicaEnv(p.spec, p.dir)...)
}

// failStart records that p could not start: the reason goes into its log
// (so that `gpusched logs` shows it) and into its status.
func (a *Agent) failStart(p *proc, err error, now time.Time) {
	a.log.Warn("replica failed to start", "replica", p.spec.ID, "job", p.spec.Job, "err", err)
	if p.dir != "" {
		if f, ferr := os.OpenFile(filepath.Join(p.dir, logFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); ferr == nil {
			fmt.Fprintf(f, "gpusched agent: replica %s did not start: %v\n", p.spec.ID, err)
			f.Close()
		}
	}
	a.update(p, func(p *proc) {
		if p.status.StartedAt.IsZero() {
			p.status.StartedAt = now
		}
	})
	a.exit(p, exitInfo{code: -1, err: "start: " + err.Error()}, now)
}

// update runs f on p under the table's lock.
func (a *Agent) update(p *proc, f func(p *proc)) { a.reps.update(p, f) }

// startAll starts the replicas of a plan.
func (a *Agent) startAll(ps []*proc) {
	for _, p := range ps {
		a.start(p)
	}
}
