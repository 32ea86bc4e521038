package shim

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpusched/gpusched/service/confine"
)

// shimPoll is how often a shim checks whether the leftover processes of a
// group whose main process exited are gone.
const shimPoll = 50 * time.Millisecond

// shimOptions are a shim's arguments.
type shimOptions struct {
	dir     string        // the replica's directory, absolute
	grace   time.Duration // leftover processes: SIGTERM, grace, SIGKILL
	helloFD int           // where to say that the command started; 0: nowhere
	// cred, when set, is the account the command runs as. The shim itself
	// stays the agent's account (root): it alone writes the replica's
	// records (shim.json, exit.json) into a directory the command cannot
	// write to, keeps signalling the whole group, and cannot be signalled
	// or traced by the command.
	cred *syscall.Credential
	// box, when set (--cgroup), is the replica's cgroup (the agent's
	// cgroup.json in dir): the command starts in it, every process of the
	// replica stays in it, and the shim waits until it is empty.
	box *confine.Box
	// boxFD, when set, is a pipe the agent closes once it has moved the
	// shim into box (cgroup v1): the shim waits for that, then starts the
	// command, entering the box itself if it is not in it.
	boxFD   int
	command []string
}

// Hello is the one message a shim writes to its hello pipe: the PID of
// the replica's main process, or why the command could not start.
type Hello struct {
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
}

// Run is a replica's shim, the hidden command `gpusched shim` that an
// agent starts for every replica, in a session of its own, so that it
// outlives the agent. args are
//
//	--dir DIR [--grace SECONDS] [--hello-fd N] [--uid U --gid G [--groups G,...]] [--cgroup] -- COMMAND ARGS...
//
// With --uid the command runs as that user, group and supplementary groups
// (the shim stays as it is) and enters its working directory — the
// shim's — as that user. With --cgroup the command starts in the cgroup
// that DIR/cgroup.json names (confine.Box), the shim waits until that
// cgroup is empty too, kills what is left there after the grace period,
// reports an out-of-memory kill as such and removes the cgroup.
// Run starts COMMAND in a new process group, with the shim's own
// environment, working directory, stdout and stderr, and records it in
// DIR/shim.json; it writes {"pid":N} (or {"error":"..."}) to file
// descriptor N and closes it. Then it waits until every process of the
// group is gone — leftovers of a group whose main process exited get
// SIGTERM, the grace period and SIGKILL; SIGTERM and SIGINT sent to the
// shim are passed on to the group — and writes how the main process ended
// to DIR/exit.json, durably, before it returns. A command that cannot
// start is recorded there too (exit code -1). Errors about args wrap
// ErrUsage.
func Run(args []string) error {
	o, err := parseShimArgs(args)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var hello *os.File
	if o.helloFD > 2 {
		syscall.CloseOnExec(o.helloFD) // the command must not hold the pipe open
		hello = os.NewFile(uintptr(o.helloFD), "hello")
	}
	// Without a subreaper the group's orphans go to init; the group check
	// still ends, as zombies do not count.
	_ = BecomeSubreaper()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	boot := BootID()
	pid, err := startShimCommand(o)
	if err == nil {
		st := Started{ShimPID: os.Getpid(), ShimStart: StartTime(os.Getpid()), PID: pid, BootID: boot,
			StartedAt: time.Now().UTC()}
		if err = WriteDurable(filepath.Join(o.dir, StartedFile), st); err != nil {
			m := members{pgid: pid, box: o.box}
			m.kill()
			waitGroup(m, 0, nil)
		}
	}
	if err != nil {
		sayHello(hello, Hello{Error: err.Error()})
		ex := Exit{ExitCode: -1, Error: "start: " + err.Error(), FinishedAt: time.Now().UTC(), BootID: boot}
		return WriteDurable(filepath.Join(o.dir, ExitFile), ex)
	}
	sayHello(hello, Hello{PID: pid})
	ex := waitGroup(members{pgid: pid, box: o.box}, o.grace, sigs)
	if o.box != nil {
		ex = boxExit(ex, *o.box)
	}
	ex.FinishedAt, ex.BootID = time.Now().UTC(), boot
	return WriteDurable(filepath.Join(o.dir, ExitFile), ex)
}

// parseShimArgs reads the shim's arguments.
func parseShimArgs(args []string) (shimOptions, error) {
	fs := flag.NewFlagSet("gpusched shim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o shimOptions
	var grace int
	fs.StringVar(&o.dir, "dir", "", "the replica's directory")
	fs.IntVar(&grace, "grace", 30, "grace period in seconds")
	fs.IntVar(&o.helloFD, "hello-fd", 0, "file descriptor to report the start on")
	uid := fs.Int64("uid", -1, "user the command runs as")
	gid := fs.Int64("gid", -1, "group the command runs as, with --uid")
	groups := fs.String("groups", "", "supplementary groups of the command, with --uid")
	cgroup := fs.Bool("cgroup", false, "start the command in the cgroup DIR/"+BoxFile+" names")
	fs.IntVar(&o.boxFD, "cgroup-fd", 0, "with --cgroup: a pipe the agent closes once it has moved the shim into the cgroup")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if *cgroup && o.dir != "" {
		b, found, err := confine.Load(filepath.Join(o.dir, BoxFile))
		if err == nil && !found {
			err = fmt.Errorf("--cgroup: no %s in %s", BoxFile, o.dir)
		}
		if err != nil {
			return o, err
		}
		o.box = &b
	}
	if o.cred, err = parseCredential(*uid, *gid, *groups); err != nil {
		return o, err
	}
	o.command, o.grace = fs.Args(), time.Duration(max(grace, 0))*time.Second
	switch {
	case o.dir == "" || !filepath.IsAbs(o.dir):
		return o, fmt.Errorf("--dir %q: want the replica's absolute directory", o.dir)
	case len(o.command) == 0 || o.command[0] == "":
		return o, errors.New("no command after --")
	case o.helloFD < 0:
		return o, fmt.Errorf("--hello-fd %d: want a file descriptor", o.helloFD)
	}
	return o, nil
}

// parseCredential reads the --uid, --gid and --groups flags: nil without
// --uid.
func parseCredential(uid, gid int64, groups string) (*syscall.Credential, error) {
	switch {
	case uid < 0 && gid < 0 && groups == "":
		return nil, nil
	case uid < 0 || uid > math.MaxUint32 || gid < 0 || gid > math.MaxUint32:
		return nil, fmt.Errorf("--uid %d --gid %d: want both, as numbers", uid, gid)
	}
	c := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	for g := range strings.SplitSeq(groups, ",") {
		if g == "" {
			continue
		}
		n, err := strconv.ParseUint(g, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("--groups %q: want numeric group IDs", groups)
		}
		c.Groups = append(c.Groups, uint32(n))
	}
	return c, nil
}

// startShimCommand starts the replica's command in a new process group and
// returns its PID (the group's ID).
func startShimCommand(o shimOptions) (int, error) {
	cmd := exec.Command(o.command[0], o.command[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if o.cred != nil {
		// The child changes its identity before it changes directory: it
		// enters the working directory by its whole path, as its own user,
		// rather than inheriting one its user may not reach.
		wd, err := os.Getwd()
		if err != nil {
			return 0, fmt.Errorf("working directory: %w", err)
		}
		cmd.Dir, cmd.SysProcAttr.Credential = wd, o.cred
	}
	start := cmd.Start
	if o.box != nil {
		waitEntry(o.boxFD)
		start = func() error { return o.box.Start(cmd) }
	}
	if err := start(); err != nil {
		return 0, err
	}
	// The shim reaps the process itself (waitGroup), never through cmd.
	return cmd.Process.Pid, nil
}

// waitEntry waits until the agent closes pipe fd (its boxEntry): it has
// moved the shim into the replica's cgroup, or failed to. Nothing for fd
// 0.
func waitEntry(fd int) {
	if fd <= 2 {
		return
	}
	syscall.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "cgroup-entry")
	_, _ = io.Copy(io.Discard, f)
	_ = f.Close()
}

// sayHello writes h to the hello pipe, if there is one, and closes it.
func sayHello(f *os.File, h Hello) {
	if f == nil {
		return
	}
	b, _ := json.Marshal(h)
	_, _ = f.Write(append(b, '\n'))
	_ = f.Close()
}

// members are the processes of a replica a shim waits for: the process
// group of its main process and, when it is confined, its cgroup, which
// also holds those that left the group.
type members struct {
	pgid int
	box  *confine.Box
}

// signal sends sig to every member.
func (m members) signal(sig syscall.Signal) {
	SignalGroup(m.pgid, sig)
	if m.box != nil {
		m.box.Signal(sig)
	}
}

// kill sends SIGKILL to every member, through the cgroup when there is one.
func (m members) kill() {
	SignalGroup(m.pgid, syscall.SIGKILL)
	if m.box != nil {
		_ = m.box.Kill()
	}
}

// gone reports whether no member is left (zombies do not count).
func (m members) gone() bool {
	return GroupGone(m.pgid) && (m.box == nil || m.box.Empty())
}

// waitGroup waits for main process m.pgid and then until every member of
// m is gone, and returns how the main process ended. Members left after
// the main process exited get SIGTERM, grace, then SIGKILL. Signals from
// sigs are passed on to the members.
func waitGroup(m members, grace time.Duration, sigs <-chan os.Signal) Exit {
	pid := m.pgid
	leader := make(chan Exit, 1)
	none := make(chan struct{}) // closed when the shim has no child left
	go reapChildren(pid, leader, none)
	var (
		ex    Exit
		left  bool // the main process exited
		kill  <-chan time.Time
		tick  = time.NewTicker(shimPoll)
		check <-chan time.Time
	)
	defer tick.Stop()
	for {
		select {
		case s := <-sigs:
			if sig, ok := s.(syscall.Signal); ok {
				m.signal(sig)
			}
			continue
		case ex = <-leader:
			left, check = true, tick.C
			if !m.gone() {
				m.signal(syscall.SIGTERM)
				kill = time.After(grace)
			}
		case <-kill:
			kill = nil
			m.kill()
		case <-none:
			none = nil
		case <-check:
		}
		if left && m.gone() {
			return ex
		}
	}
}

// reapChildren reaps the shim's children — the main process pid, whose
// exit it sends on leader, and the group's orphans the shim inherited as
// subreaper — until none is left, then closes none.
func reapChildren(pid int, leader chan<- Exit, none chan<- struct{}) {
	defer close(none)
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil: // ECHILD: no child, so no descendant either
			return
		case got == pid:
			leader <- exitOfStatus(pid, ws)
		}
	}
}

// boxExit completes ex, the exit of a replica confined in box b: a
// failure with a process of the box killed for want of memory is an
// out-of-memory failure. The box, empty now, is removed (the agent tries
// again when it sees the exit).
func boxExit(ex Exit, b confine.Box) Exit {
	if n, err := b.OOMKills(); err == nil && n > 0 && ex.ExitCode != 0 {
		ex.OutOfMemory, ex.Error = true, b.OOMMessage()
	}
	_ = b.Remove()
	return ex
}

// exitOfStatus is how process pid ended, by its wait status.
func exitOfStatus(pid int, ws syscall.WaitStatus) Exit {
	if ws.Signaled() {
		return Exit{PID: pid, ExitCode: 128 + int(ws.Signal()), Signal: unix.SignalName(ws.Signal())}
	}
	return Exit{PID: pid, ExitCode: ws.ExitStatus()}
}

// Args returns the arguments (after the shim command) that start a
// replica's shim for command in directory dir; extra (e.g. the account's --uid) go before
// the command.
func Args(dir string, grace int, helloFD int, extra, command []string) []string {
	args := []string{"--dir", dir, "--grace", strconv.Itoa(max(grace, 0)), "--hello-fd", strconv.Itoa(helloFD)}
	args = append(append(args, extra...), "--")
	return append(args, command...)
}

// Main runs Run(args) and returns the exit status of the process:
// 0, 2 for bad arguments, 1 for other errors (written to stderr). A test
// binary that runs agents calls it from TestMain when started with the
// argument "shim": the agents start their shims as the running program
// (Config.Shim).
func Main(args []string, stderr io.Writer) int {
	err := Run(args)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "gpusched shim:", err)
	if errors.Is(err, ErrUsage) {
		return 2
	}
	return 1
}

// CredentialArgs are the shim's arguments that start the replica's
// command as uid, gid and the supplementary groups (Args' extra).
func CredentialArgs(uid, gid uint32, groups []uint32) []string {
	gs := make([]string, len(groups))
	for i, g := range groups {
		gs[i] = strconv.FormatUint(uint64(g), 10)
	}
	return []string{"--uid", strconv.FormatUint(uint64(uid), 10), "--gid", strconv.FormatUint(uint64(gid), 10),
		"--groups", strings.Join(gs, ",")}
}
