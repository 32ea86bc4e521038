//go:build linux

package shim

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Catches reports whether process pid has a handler for sig (the SigCgt
// mask of /proc/<pid>/status).
func Catches(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && sig >= 1 && sig <= 64 && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}
