package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gpusched/gpusched/service/machine"
	"github.com/gpusched/gpusched/service/shim"
)

// launch is a shim this agent started.
type launch struct {
	cmd *exec.Cmd
	// hello delivers the shim's message (the main process's PID, or why
	// the command did not start); a zero shim.Hello when the shim ended
	// without one.
	hello chan shim.Hello
	// waited is closed once the shim has exited and was reaped.
	waited chan struct{}
}

// start starts replica p (entered in the table by reconcile) through a
// shim, and its supervisor; a replica that cannot start is reported
// exited with exit code -1 and the reason.
func (a *Agent) start(p *proc) {
	now := time.Now()
	cmd, entry, err := a.prepare(p)
	if err != nil {
		a.failStart(p, err, now)
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		closeOutput(cmd)
		entry.done(0)
		a.failStart(p, fmt.Errorf("hello pipe: %w", err), now)
		return
	}
	cmd.ExtraFiles = append([]*os.File{w}, cmd.ExtraFiles...) // file descriptor 3 of the shim; the entry's 4
	// Record the start before it happens: a restarted agent then knows the
	// replica, even if this one dies right after starting it.
	a.update(p, func(p *proc) { p.status.StartedAt, p.shim = now, true })
	a.save(p)
	err = cmd.Start()
	w.Close() // the shim has its own copy
	closeOutput(cmd)
	if err != nil {
		r.Close()
		entry.done(0)
		a.failStart(p, fmt.Errorf("shim: %w", err), now)
		return
	}
	go entry.done(cmd.Process.Pid)
	l := &launch{cmd: cmd, hello: make(chan shim.Hello, 1), waited: make(chan struct{})}
	go l.readHello(r)
	go func() { _ = cmd.Wait(); close(l.waited) }()
	go a.supervise(p, l, true)
}

// readHello reads the shim's message from r until the shim closes its end
// (or exits) and delivers it.
func (l *launch) readHello(r *os.File) {
	defer r.Close()
	var h shim.Hello
	b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	if err := json.Unmarshal(bytes.TrimSpace(b), &h); err != nil {
		h = shim.Hello{}
	}
	l.hello <- h
}

// closeOutput closes the parent's copy of the log file cmd writes to.
func closeOutput(cmd *exec.Cmd) {
	if f, ok := cmd.Stdout.(*os.File); ok {
		f.Close()
	}
}

// prepare creates p's directory, host files, environment file and log file
// and returns the command that starts its shim, in a session of its own,
// with the replica's environment and working directory and its output
// going to the log file. The shim starts the replica's command, as the
// job owner's account under RunAsOwner (accountOf).
func (a *Agent) prepare(p *proc) (*exec.Cmd, *boxEntry, error) {
	spec := p.spec
	if p.dir == "" {
		return nil, nil, fmt.Errorf("replica id %q: want letters, digits, '.', '_' or '-'", spec.ID)
	}
	if len(spec.Command) == 0 || spec.Command[0] == "" {
		return nil, nil, errors.New("empty command")
	}
	acct, err := a.accountOf(spec.User)
	if err != nil {
		return nil, nil, err
	}
	home, err := makeReplicaDir(p.dir, acct)
	if err != nil {
		return nil, nil, err
	}
	if err := shim.WriteHostFiles(p.dir, spec.HostFile, a.cfg.Name); err != nil {
		return nil, nil, fmt.Errorf("host files: %w", err)
	}
	if err := a.writeEnvFile(spec, p.dir, acct); err != nil {
		return nil, nil, fmt.Errorf("environment file: %w", err)
	}
	dir, err := workdir(spec.Workdir, p.dir, home)
	if err != nil {
		return nil, nil, err
	}
	out, err := openOwned(filepath.Join(p.dir, shim.LogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, acct)
	if err != nil {
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	box, entry, err := a.makeBox(p)
	if err != nil {
		out.Close()
		return nil, nil, err
	}
	bin := a.cfg.Shim
	args := shim.Args(p.dir, spec.GracePeriodS, 3, append(shimArgs(acct), box...), spec.Command)
	cmd := exec.Command(bin[0], append(bin[1:len(bin):len(bin)], args...)...)
	cmd.Env, cmd.Dir = a.environ(p, acct), dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if entry != nil {
		cmd.ExtraFiles = []*os.File{entry.r}
	}
	return cmd, entry, nil
}

// workDir is the name of the working directory, in a replica's directory,
// of a replica that runs as its owner's account.
const workDir = "work"

// makeReplicaDir creates replica directory dir and returns the directory
// relative working directories start from. For a replica running as acct
// (not nil), dir is the agent's (0711: acct passes through it but cannot
// list or change it, so the records the agent and the shim keep there are
// safe from the job) and acct gets its own working directory dir/work
// (0700) and progress file (0600); for a replica running as the agent it
// is dir itself.
func makeReplicaDir(dir string, acct *account) (string, error) {
	if acct == nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("replica directory: %w", err)
		}
		return dir, nil
	}
	home := filepath.Join(dir, workDir)
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o711}, {home, 0o700}} {
		if err := os.Mkdir(d.path, d.mode); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("replica directory: %w", err)
		}
		if err := os.Chmod(d.path, d.mode); err != nil {
			return "", fmt.Errorf("replica directory: %w", err)
		}
	}
	if err := acct.Own(home); err != nil {
		return "", err
	}
	f, err := openOwned(shim.ProgressPath(dir), os.O_WRONLY|os.O_CREATE, acct)
	if err != nil {
		return "", fmt.Errorf("progress file: %w", err)
	}
	f.Close()
	return home, nil
}

// workdir is the replica's working directory: spec's Workdir (absolute,
// or relative to dir), else home; it must exist.
func workdir(spec, dir, home string) (string, error) {
	wd := home
	switch {
	case spec == "":
	case filepath.IsAbs(spec):
		wd = spec
	default: // relative to the replica's directory
		wd = filepath.Join(dir, spec)
	}
	if fi, err := os.Stat(wd); err != nil || !fi.IsDir() {
		if err == nil {
			return "", fmt.Errorf("workdir %s: not a directory", wd)
		}
		return "", fmt.Errorf("workdir: %w", err)
	}
	return wd, nil
}

// openOwned opens file path with flag, creating it 0644 for the agent's
// own replicas, or 0600 and handed to acct (not nil) through the open
// descriptor.
func openOwned(path string, flag int, acct *account) (*os.File, error) {
	if acct == nil {
		return os.OpenFile(path, flag, 0o644)
	}
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chown(int(acct.UID), int(acct.GID)); err != nil {
		f.Close()
		return nil, fmt.Errorf("hand %s to account %s: %w", path, acct.Name, err)
	}
	return f, nil
}

// environ is a replica's environment: the agent's own, then acct's HOME,
// USER and LOGNAME, then replicaEnv (the replica's Env, which wins, and
// the agent's GPUSCHED_* variables). A replica running as another account
// (acct not nil) gets none of the agent's variables that may hold a
// credential (machine.SecretEnv): its job token (GPUSCHED_TOKEN, in its Env) is the
// only one it sees.
func (a *Agent) environ(p *proc, acct *account) []string {
	env := os.Environ()
	if acct != nil {
		env = slices.DeleteFunc(env, machine.SecretEnv)
	}
	return append(append(env, acct.Environ()...), a.replicaEnv(p.spec, p.dir)...)
}

// failStart records that p could not start: the reason goes into its log
// (so that `gpusched logs` shows it) and into its status.
func (a *Agent) failStart(p *proc, err error, now time.Time) {
	a.logStartFailure(p, err.Error())
	a.update(p, func(p *proc) {
		if p.status.StartedAt.IsZero() {
			p.status.StartedAt = now
		}
	})
	a.exit(p, exitInfo{code: -1, err: "start: " + err.Error()}, now)
}

// logStartFailure logs that p did not start and why, and writes it into
// p's output.
func (a *Agent) logStartFailure(p *proc, why string) {
	why = strings.TrimPrefix(why, "start: ")
	a.log.Warn("replica failed to start", "replica", p.spec.ID, "job", p.spec.Job, "err", why)
	if p.dir != "" {
		if f, ferr := os.OpenFile(filepath.Join(p.dir, shim.LogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); ferr == nil {
			fmt.Fprintf(f, "gpusched agent: replica %s did not start: %s\n", p.spec.ID, why)
			f.Close()
		}
	}
}

// update runs f on p under the table's lock.
func (a *Agent) update(p *proc, f func(p *proc)) { a.reps.update(p, f) }

// startAll starts the replicas of a plan.
func (a *Agent) startAll(ps []*proc) {
	for _, p := range ps {
		a.start(p)
	}
}
