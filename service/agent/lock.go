package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// lockWait is how long lockDataDir retries a lock held elsewhere: a
// process forked by the same program (a shim being started) holds a copy
// of the lock's file until it execs, so an agent started in the same
// program right after another one released the lock may find it held for
// an instant.
const lockWait = 250 * time.Millisecond

// lockDataDir takes an exclusive lock on the data directory (flock of
// <data>/agent.lock, which holds the agent's PID), so that two agents never
// manage the same replicas. The lock ends with the returned release or
// with the process. Shims and replicas do not inherit it (Go opens files
// close-on-exec), so an agent started after this one exits gets it even
// while the replicas run on.
func lockDataDir(dir string) (release func(), err error) {
	path := filepath.Join(dir, "agent.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s is in use by another agent (see %s)", dir, path)
		}
		return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
