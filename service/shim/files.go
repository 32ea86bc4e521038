package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The files a replica's shim writes into the replica's directory. They are
// the contract between a shim and whichever agent watches it — maybe a
// newer one, after an upgrade — so fields may be added, never changed.
const (
	// StartedFile (Started) is written once the replica's command runs.
	StartedFile = "shim.json"
	// BoxFile (a confine.Box) names the replica's cgroup, written by the
	// agent before the shim starts (--cgroup).
	BoxFile = "cgroup.json"
	// ExitFile (Exit) is written once the replica's process group is
	// gone, or its command could not start.
	ExitFile = "exit.json"
)

// Started is a shim's started file: which processes to watch.
type Started struct {
	// ShimPID and ShimStart (its start time in clock ticks after boot, 0
	// when unknown) name the shim: a PID may be reused, a PID and start
	// time within one boot may not.
	ShimPID   int    `json:"shim_pid"`
	ShimStart uint64 `json:"shim_start,omitempty"`
	// PID is the replica's main process, leader of its process group.
	PID int `json:"pid"`
	// BootID is the machine's boot the shim runs in.
	BootID    string    `json:"boot_id,omitempty"`
	StartedAt time.Time `json:"started_at"`
}

// Exit is a shim's exit file: how the replica ended.
type Exit struct {
	// PID is the main process that exited; 0 when the command did not
	// start.
	PID int `json:"pid,omitempty"`
	// ExitCode is the main process's exit code: 128 + the signal number
	// when a signal ended it, -1 when it did not start.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that ended the main process, if one did.
	Signal string `json:"signal,omitempty"`
	// Error says why the command did not start.
	Error string `json:"error,omitempty"`
	// OutOfMemory: the replica failed and its cgroup ran out of memory
	// (Error names the limit).
	OutOfMemory bool      `json:"out_of_memory,omitempty"`
	FinishedAt  time.Time `json:"finished_at"`
	BootID      string    `json:"boot_id,omitempty"`
}

// ReadFile decodes the shim file name in replica directory dir into v;
// found is false when the file does not exist.
func ReadFile(dir, name string, v any) (found bool, err error) {
	err = ReadJSON(filepath.Join(dir, name), v)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// WriteDurable writes v as JSON to path so that it survives a crash of the
// machine: a temporary file, fsync, rename, fsync of the directory.
// Readers see no file or the whole file.
func WriteDurable(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// syncDir flushes directory dir's entries (a rename into it) to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadJSON decodes the JSON file at path into v.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// ErrUsage is wrapped by Run's errors about its arguments.
var ErrUsage = errors.New("bad shim arguments")

// WriteFile writes data to path through a temporary file in the same
// directory, of mode perm and owned by uid and gid (-1: unchanged), and a
// rename, so that readers see the old or the new content and the file
// has its owner before it gets its name.
func WriteFile(path string, data []byte, perm os.FileMode, uid, gid int) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && (uid >= 0 || gid >= 0) {
		err = f.Chown(uid, gid)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
