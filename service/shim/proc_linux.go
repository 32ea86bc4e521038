//go:build linux

package shim

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes the calling process (the agent, or a shim) the
// parent of its descendants' orphans (PR_SET_CHILD_SUBREAPER), so that it
// can reap them itself: the machine's init (a container's first process,
// say) may never reap them.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// ReapOrphans reaps exited children of the calling process (an agent)
// that no supervisor waits for: orphans inherited as subreaper that left their replica's process
// group (setsid daemons). It leaves alone process group leaders — every
// shim leads its own session and group, and the supervisor that started it
// waits for it; a replica's main process, orphaned when its shim died, is
// reaped by its supervisor — and children in the agent's own process
// group, which other code in the same program (tests, gpusched dev) may
// have started and will wait for.
func ReapOrphans() {
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
		st, ok := procStat(pid)
		if !ok || st.state != 'Z' || st.ppid != self || st.pgrp == group || st.pgrp == pid {
			continue
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// procInfo is what /proc/PID/stat says of a process.
type procInfo struct {
	state      byte // R, S, D, Z, ...
	ppid, pgrp int
	start      uint64 // start time, in clock ticks after boot
}

// procStat reads a process's state, parent, process group and start time
// from /proc/PID/stat.
func procStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 of proc(5), state
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{state: f[0][0], ppid: ppid, pgrp: pgrp, start: start}, true
}

// StartTime returns process pid's start time (clock ticks after boot), 0
// when unknown. With the boot ID it names a process unambiguously: a PID
// may be reused, a PID and start time in one boot are not.
func StartTime(pid int) uint64 {
	st, _ := procStat(pid)
	return st.start
}

// ProcessAlive reports whether process pid runs (a zombie does not) and,
// when start is not 0, started at start: otherwise its PID was reused.
func ProcessAlive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, ok := procStat(pid)
	return ok && st.state != 'Z' && (start == 0 || st.start == start)
}

// GroupHasLive reports whether process group pgid, which kill(2) says
// exists, has a process that is not a zombie. Zombies hold no memory and
// no GPU, and those whose parent is a non-reaping init never go away: a
// replica whose shim died leaves its orphans to init. The group leader is
// looked at first; only when it is gone are all processes scanned.
func GroupHasLive(pgid int) bool {
	if st, ok := procStat(pgid); ok && st.pgrp == pgid && st.state != 'Z' {
		return true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procStat(pid); ok && st.pgrp == pgid && st.state != 'Z' {
			return true
		}
	}
	return false
}

// BootID identifies the machine's current boot; a process group recorded in
// another boot is certainly gone, whatever now runs under its number.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
