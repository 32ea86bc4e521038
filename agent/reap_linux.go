//go:build linux

package agent

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes the agent the parent of its replicas' orphans
// (PR_SET_CHILD_SUBREAPER), so that it can reap them itself: a process
// group counts as gone only once its zombies are reaped, and the machine's
// init (a container's first process, say) may never reap them.
func (a *Agent) becomeSubreaper() bool {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		a.log.Warn("cannot become child subreaper; orphans of replicas are left to init", "err", err)
		return false
	}
	return true
}

// sweepZombies reaps exited children of the agent that no supervisor waits
// for: orphans inherited as subreaper that left their replica's process
// group (setsid daemons). It leaves alone process group leaders — every
// replica's main process is one, and its supervisor (of this agent or of
// another in the same program) waits for it — and children in the agent's
// own process group, which other code in the same program (tests, gpusched
// dev) may have started and will wait for.
func (a *Agent) sweepZombies() {
	self, group := os.Getpid(), syscall.Getpgrp()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, ppid, pgrp, ok := procStat(pid)
		if !ok || state != 'Z' || ppid != self || pgrp == group || pgrp == pid {
			continue
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// procStat reads a process's state, parent and process group from
// /proc/PID/stat.
func procStat(pid int) (state byte, ppid, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return f[0][0], ppid, pgrp, true
}

// bootID identifies the machine's current boot; a process group recorded in
// another boot is certainly gone, whatever now runs under its number.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
