package agent

import (
	"fmt"
	"syscall"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/shim"
)

// exitInfo is how a replica ended.
type exitInfo struct {
	code   int
	signal string // e.g. "SIGKILL"
	err    string
	// lost: the replica's exit status is unknown — its shim died without
	// recording it, or the node rebooted. The server handles it like a
	// lost node, not like a failure.
	lost bool
	// oom: the replica's cgroup ran out of memory and the kernel killed
	// a process of it (err says the limit).
	oom bool
}

// exitOf is the exit a shim's exit file records.
func exitOf(e shim.Exit) exitInfo {
	return exitInfo{code: e.ExitCode, signal: e.Signal, err: e.Error, oom: e.OutOfMemory}
}

// unknownExit is how a replica adopted from an old record (started
// without a shim) ends: its exit status went to the agent that started it.

var unknownExit = exitInfo{code: -1, err: "exit status unknown: the replica was started by an earlier agent"}

// watch is the state of one replica's supervisor.
type watch struct {
	a  *Agent
	p  *proc
	id string
	l  *launch // the shim this agent started; nil for an adopted replica
	// pgid is the replica's main process, leader of its process group; 0
	// until known.
	pgid  int
	grace time.Duration
	// sameBoot: the replica was started in this boot of the machine, so
	// its PIDs may be looked at and signalled.
	sameBoot bool
	since    time.Time     // when the watch began
	started  *shim.Started // an adopted replica's shim file, once read
	// termWhy is a stop asked for before the PID was known.
	termWhy string
	termed  bool
	kill    <-chan time.Time
	// polling: the exit is known (info) or unknowable; the supervisor
	// waits until the group is gone, then reports it.
	polling bool
	info    exitInfo
	done    bool
}

// supervise watches replica p until it has ended and records its exit. l
// is the shim this agent started, nil for a replica adopted from an
// earlier agent, in which case sameBoot says whether the replica's record
// was written in this boot. The shim reaps the replica's processes and
// writes the exit file; the supervisor learns of the shim's end by waiting
// for it (l) or, for an adopted replica, by reading the shim's files and
// looking at its PID every progress poll. A stop request sends SIGTERM to
// the replica's process group and SIGKILL after the grace period.
// Meanwhile it reads the replica's progress file, a last time before the
// exit is reported. It returns early, leaving the replica running, when
// the agent detaches (Run returned).
func (a *Agent) supervise(p *proc, l *launch, sameBoot bool) {
	w := &watch{a: a, p: p, id: p.spec.ID, l: l, sameBoot: sameBoot, since: time.Now(),
		grace: time.Duration(max(p.spec.GracePeriodS, 0)) * time.Second}
	w.pgid = read(a.reps, p, func(p *proc) int { return p.status.PID })
	var (
		hello   <-chan shim.Hello
		waited  <-chan struct{}
		stop    = p.stop
		group   = time.NewTicker(a.t.groupPoll)
		prog    = time.NewTicker(a.t.progEvery)
		shimmed = read(a.reps, p, func(p *proc) bool { return p.shim })
	)
	defer group.Stop()
	defer prog.Stop()
	if l != nil {
		hello, waited = l.hello, l.waited
	}
	if !shimmed { // an old record: only the group can be watched
		w.polling, w.info = true, unknownExit
	}
	for !w.done {
		var poll <-chan time.Time
		if w.polling {
			poll = group.C
		}
		select {
		case h := <-hello:
			hello = nil
			w.hello(h)
		case <-waited:
			waited = nil
			if hello != nil { // the shim has closed the pipe: it comes at once
				w.hello(<-hello)
				hello = nil
			}
			w.shimEnded()
		case <-stop:
			stop = nil
			w.terminate(read(a.reps, p, func(p *proc) string { return p.stopWhy }))
		case <-w.kill:
			w.kill = nil
			shim.SignalGroup(w.pgid, syscall.SIGKILL)
			a.killBox(p)
			a.log.Warn("grace period over: SIGKILL sent", "replica", w.id, "grace", w.grace)
		case <-a.detach:
			return
		case <-prog.C:
			a.pollProgress(p)
			if shimmed && l == nil && !w.polling {
				w.check()
			}
		case <-poll:
			reapGroup(w.pgid)
			if shim.GroupGone(w.pgid) {
				w.finish(w.info)
			}
		}
	}
}

// setPID records the replica's main process once known.
func (w *watch) setPID(pid int) {
	if pid <= 1 || pid == w.pgid {
		return
	}
	w.pgid = pid
	w.a.update(w.p, func(p *proc) { p.status.PID = pid })
	w.a.save(w.p)
	w.a.report()
	if w.termWhy != "" {
		w.terminate(w.termWhy)
	}
}

// hello handles the message of a shim this agent started.
func (w *watch) hello(h shim.Hello) {
	switch {
	case h.PID > 0:
		w.setPID(h.PID)
		gpus := read(w.a.reps, w.p, func(p *proc) []int { return p.spec.GPUs })
		w.a.log.Info("replica started", "replica", w.id, "job", w.p.spec.Job, "pid", h.PID, "gpus", gpus)
	case h.Error != "":
		w.a.logStartFailure(w.p, h.Error)
	}
}

// shimEnded handles the end of the shim this agent started: its exit file
// says how the replica ended; without one the replica is lost.
func (w *watch) shimEnded() {
	var ex shim.Exit
	found, err := shim.ReadFile(w.p.dir, shim.ExitFile, &ex)
	switch {
	case found:
		w.setPID(ex.PID)
		w.finish(exitOf(ex))
	case err != nil:
		w.lose(fmt.Sprintf("its exit file is unreadable (%v)", err))
	case w.pgid == 0:
		w.finish(exitInfo{code: -1, err: "start: the shim ended before starting the command (" +
			w.l.cmd.ProcessState.String() + ")"})
	default:
		w.lose("its shim ended (" + w.l.cmd.ProcessState.String() + ") without recording the exit status")
	}
}

// check looks at the files and the process of an adopted replica's shim.
// The shim writes the exit file before it exits, so the exit file is read
// after the shim is seen gone.
func (w *watch) check() {
	if w.started == nil {
		var st shim.Started
		found, err := shim.ReadFile(w.p.dir, shim.StartedFile, &st)
		if err != nil {
			w.a.log.Warn("unreadable shim file", "replica", w.id, "err", err)
		}
		if found {
			w.started, w.sameBoot = &st, st.BootID == w.a.boot
			if w.sameBoot {
				w.setPID(st.PID)
			}
		}
	}
	if st := w.started; st != nil && w.sameBoot && shim.ProcessAlive(st.ShimPID, st.ShimStart) {
		return
	}
	var ex shim.Exit
	found, err := shim.ReadFile(w.p.dir, shim.ExitFile, &ex)
	switch {
	case found:
		w.finish(exitOf(ex))
	case err != nil:
		w.lose(fmt.Sprintf("its exit file is unreadable (%v)", err))
	case !w.sameBoot:
		w.lose("the node restarted while it ran")
	case w.started != nil:
		w.lose("its shim is gone and recorded no exit status")
	case time.Since(w.since) >= w.a.t.shimStart:
		w.lose("its shim never recorded a start")
	}
}

// lose records that the replica's exit status is unknown. Processes of its
// group that still run (its shim was killed, they were not) are stopped
// first — SIGTERM, the grace period, SIGKILL — since no one could tell how
// they end; then the replica is reported lost.
func (w *watch) lose(why string) {
	info := exitInfo{code: -1, lost: true, err: "lost: " + why + "; its exit status is unknown"}
	w.a.log.Warn("replica lost", "replica", w.id, "job", w.p.spec.Job, "why", why)
	if w.sameBoot && w.pgid > 1 && !shim.GroupGone(w.pgid) {
		w.terminate("it is lost: " + why)
		w.polling, w.info = true, info
		return
	}
	w.finish(info)
}

// terminate sends SIGTERM to the replica's group, once, and sets the
// grace period's timer; before the group is known, it is sent when it is.
func (w *watch) terminate(why string) {
	if w.termed {
		return
	}
	if w.pgid <= 1 {
		w.termWhy = why
		return
	}
	w.termed = true
	shim.SignalGroup(w.pgid, syscall.SIGTERM)
	w.a.log.Info("stopping replica: SIGTERM sent", "replica", w.id, "why", why, "grace", w.grace)
	w.kill = time.After(w.grace)
}

// finish reads the progress file a last time and records the exit.
func (w *watch) finish(info exitInfo) {
	w.a.pollProgress(w.p)
	w.a.exit(w.p, info, time.Now())
	w.done = true
}

// exit records that p has ended, saves and reports it. A replica the
// agent stopped on its own gets an error, so that a graceful exit 0 on
// SIGTERM does not count as the job's success.
func (a *Agent) exit(p *proc, info exitInfo, now time.Time) {
	a.update(p, func(p *proc) {
		if p.byAgent && info.err == "" {
			info.err = "stopped by its agent, which was exiting (--stop-replicas-on-exit)"
		}
		p.status.Phase = api.ReplicaExited
		p.status.ExitCode, p.status.Signal, p.status.Error = info.code, info.signal, info.err
		p.status.Lost, p.status.OutOfMemory = info.lost, info.oom
		p.status.FinishedAt = &now
	})
	a.dropBox(p)
	close(p.exited)
	a.log.Info("replica exited", "replica", p.spec.ID, "job", p.spec.Job,
		"exit_code", info.code, "signal", info.signal, "error", info.err, "lost", info.lost)
	a.save(p)
	a.report()
}

// stopAll stops every running replica and waits until all are gone, or
// for at most the longest grace period and a minute more (a process stuck
// in the kernel survives SIGKILL).
func (a *Agent) stopAll() {
	running := a.reps.running()
	longest := 0
	for _, p := range running {
		a.reps.stopForExit(p)
		longest = max(longest, p.spec.GracePeriodS)
	}
	deadline := time.After(time.Duration(longest)*time.Second + time.Minute)
	for _, p := range running {
		select {
		case <-p.exited:
		case <-deadline:
			a.log.Warn("replicas did not end after SIGKILL; leaving them", "replica", p.spec.ID)
			return
		}
	}
}

// reapGroup reaps the exited children of the caller in process group
// pgid: members whose parent died and that the caller, as subreaper,
// inherited.
func reapGroup(pgid int) {
	if pgid <= 1 {
		return
	}
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if err != nil || pid <= 0 {
			return
		}
	}
}
