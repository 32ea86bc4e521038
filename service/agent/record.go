package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/shim"
)

// recordFile is the name of a replica's record in its directory.
const recordFile = "replica.json"

// record is what the agent keeps on disk about a replica, so that a
// restarted agent neither loses its result nor starts it twice.
type record struct {
	Replica api.Replica       `json:"replica"`
	Status  api.ReplicaStatus `json:"status"`
	// BootID identifies the machine's boot the process was started in.
	BootID      string `json:"boot_id,omitempty"`
	Acked       bool   `json:"acked,omitempty"`
	LogsShipped bool   `json:"logs_shipped,omitempty"`
	// ProgressFile is where the agent is in the replica's progress file,
	// so that an adopting agent does not report old lines again.
	ProgressFile shim.ProgressWatch `json:"progress_file,omitzero"`
	// Shim: the replica was started through a shim, whose files (shim.json,
	// exit.json) tell how it ended. Records of older agents lack it: their
	// replicas are watched by their process group alone.
	Shim bool `json:"shim,omitempty"`
}

// replicaID is what a replica ID must look like to name a directory.
var replicaID = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$`)

// dirOf returns the directory of replica id, or "" when id cannot name a
// directory safely (such a replica fails to start).
func (a *Agent) dirOf(id string) string {
	if !replicaID.MatchString(id) {
		return ""
	}
	return a.replicaDir(id)
}

// save writes p's record, atomically. Errors are logged: the record only
// matters if the agent restarts.
func (a *Agent) save(p *proc) {
	if p.dir == "" {
		return
	}
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	rec := read(a.reps, p, func(p *proc) record {
		return record{Replica: p.spec, Status: p.status, BootID: a.boot,
			Acked: p.acked, LogsShipped: p.logDone, ProgressFile: p.progress, Shim: p.shim}
	})
	if err := writeJSON(filepath.Join(p.dir, recordFile), rec); err != nil {
		a.log.Warn("save replica record", "replica", p.spec.ID, "err", err)
	}
}

// saveAll saves the records of ps.
func (a *Agent) saveAll(ps []*proc) {
	for _, p := range ps {
		a.save(p)
	}
}

// writeJSON writes v as JSON to path atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return writeFileAtomic(path, append(b, '\n'), 0o600)
}

// writeFileAtomic writes data to path atomically (shim.WriteFile).
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	return shim.WriteFile(path, data, perm, -1, -1)
}

// writeFileOwned writes data to path atomically, as a file of acct with
// mode 0600: it belongs to acct before it gets its name.
func writeFileOwned(path string, data []byte, acct *account) error {
	if acct == nil {
		return writeFileAtomic(path, data, 0o600)
	}
	return shim.WriteFile(path, data, 0o600, int(acct.UID), int(acct.GID))
}

// load reads the records an earlier agent left in the data directory:
// running replicas are adopted (or reported lost), exited ones are reported
// until acknowledged, and every ID is marked seen. Old finished replicas'
// directories are pruned.
func (a *Agent) load(now time.Time) error {
	root := filepath.Join(a.cfg.DataDir, "replicas")
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("read replicas: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		id := e.Name()
		a.reps.markSeen(id)
		var rec record
		if err := shim.ReadJSON(filepath.Join(root, id, recordFile), &rec); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				a.log.Warn("unreadable replica record; the replica will not be started again", "replica", id, "err", err)
			}
			continue
		}
		a.restore(id, rec, now)
	}
	return nil
}

// restore takes over one replica from its record.
func (a *Agent) restore(id string, rec record, now time.Time) {
	if rec.Acked && rec.LogsShipped {
		fin := rec.Status.FinishedAt
		if a.cfg.Retention > 0 && fin != nil && now.Sub(*fin) > a.cfg.Retention {
			if err := os.RemoveAll(a.replicaDir(id)); err != nil {
				a.log.Warn("prune replica directory", "replica", id, "err", err)
			}
		}
		return
	}
	rec.Replica.ID = id
	p := newProc(rec.Replica, a.replicaDir(id))
	p.status, p.acked, p.logDone, p.progress = rec.Status, rec.Acked, rec.LogsShipped, rec.ProgressFile
	p.shim = rec.Shim
	p.status.ID = id
	a.reps.add(p)
	if p.status.Phase != api.ReplicaRunning {
		close(p.exited)
		return
	}
	pid := rec.Status.PID
	if rec.Shim { // its supervisor reads the shim's files
		a.log.Info("adopting replica", "replica", id, "pid", pid)
		go a.supervise(p, nil, rec.BootID == a.boot)
		return
	}
	// An old record: the replica is watched by its process group alone.
	if pid > 1 && rec.BootID == a.boot && !shim.GroupGone(pid) {
		a.log.Info("adopting running replica started without a shim", "replica", id, "pid", pid)
		go a.supervise(p, nil, true)
		return
	}
	a.exit(p, exitInfo{code: -1, err: "lost: the replica's processes ended while no agent ran; exit status unknown"}, now)
}
