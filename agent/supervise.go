package agent

import (
	"errors"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpusched/gpusched/api"
)

// exitInfo is how a replica ended.
type exitInfo struct {
	code   int
	signal string // e.g. "SIGKILL"
	err    string
}

// supervise watches replica p until its whole process group is gone, then
// records its exit. cmd is the started command, nil for a replica adopted
// from an earlier agent (whose exit status is lost). A stop request sends
// SIGTERM to the group and SIGKILL after the grace period; so does the
// leader's exit while other members of the group remain. Meanwhile it
// reads the replica's progress file, a last time before the exit is
// reported. It returns early, leaving the replica running, when the agent
// detaches (Run returned).
func (a *Agent) supervise(p *proc, cmd *exec.Cmd) {
	pgid := read(a.reps, p, func(p *proc) int { return p.status.PID })
	grace := time.Duration(max(p.spec.GracePeriodS, 0)) * time.Second
	info := exitInfo{code: -1, err: "exit status unknown: the replica was started by an earlier agent"}
	var (
		waited chan exitInfo
		poll   <-chan time.Time
		kill   <-chan time.Time
		stop   = p.stop
		termed bool
		ticker = time.NewTicker(a.t.groupPoll)
		prog   = time.NewTicker(a.t.progEvery)
		id     = p.spec.ID
	)
	defer ticker.Stop()
	defer prog.Stop()
	terminate := func(why string) {
		if !termed {
			termed = true
			signalGroup(pgid, syscall.SIGTERM)
			a.log.Info("stopping replica: SIGTERM sent", "replica", id, "why", why, "grace", grace)
			kill = time.After(grace)
		}
	}
	if cmd != nil {
		waited = make(chan exitInfo, 1)
		go func() { waited <- wait(cmd) }()
	} else {
		poll = ticker.C
	}
	for {
		select {
		case info = <-waited:
			waited, poll = nil, ticker.C
			if !groupGone(pgid) {
				terminate("its main process exited, other processes of its group remain")
			}
		case <-stop:
			stop = nil
			terminate(read(a.reps, p, func(p *proc) string { return p.stopWhy }))
		case <-kill:
			kill = nil
			signalGroup(pgid, syscall.SIGKILL)
			a.log.Warn("grace period over: SIGKILL sent", "replica", id, "grace", grace)
		case <-a.detach:
			return
		case <-prog.C:
			a.pollProgress(p)
		case <-poll:
			reapGroup(pgid)
			if groupGone(pgid) {
				a.pollProgress(p)
				a.exit(p, info, time.Now())
				return
			}
		}
	}
}

// wait waits for cmd's process (the group leader) and returns its exit.
func wait(cmd *exec.Cmd) exitInfo {
	err := cmd.Wait()
	st := cmd.ProcessState
	if st == nil {
		return exitInfo{code: -1, err: "wait: " + err.Error()}
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitInfo{code: 128 + int(ws.Signal()), signal: unix.SignalName(ws.Signal())}
	}
	return exitInfo{code: st.ExitCode()}
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
		p.status.FinishedAt = &now
	})
	close(p.exited)
	a.log.Info("replica exited", "replica", p.spec.ID, "job", p.spec.Job,
		"exit_code", info.code, "signal", info.signal, "error", info.err)
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

// signalGroup sends sig to process group pgid. It refuses pgid 0 and 1,
// whose negation would signal the agent's own group or every process.
func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, sig) // ESRCH: already gone
	}
}

// groupGone reports whether process group pgid has no process left (a
// zombie still counts: it must be reaped first).
func groupGone(pgid int) bool {
	if pgid <= 1 {
		return true
	}
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// reapGroup reaps the exited children of the agent in process group pgid:
// members whose parent died and that the agent, as subreaper, inherited.
// It must run only after the group leader was waited for.
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
