package logs

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gpusched/gpusched/service/api"
)

// Store keeps replica output under dir/<job>/<replica>.log. Appends are
// not fsynced: a crash may lose the last chunks of a log, never a job.
// Its methods are safe for concurrent use.
type Store struct {
	dir string
	mu  sync.Mutex
}

// New returns the store of the logs under dir.
func New(dir string) *Store { return &Store{dir: dir} }

// path returns the file of a replica's log. Job and replica IDs are
// validated by the caller ("j<N>", "j<N>.<attempt>.<rank>").
func (l *Store) path(job, replica string) string {
	return filepath.Join(l.dir, job, replica+".log")
}

// Append writes data, which starts at offset off of the replica's log, at
// the log's current length: the part before it is already there, and a
// chunk that starts beyond it is dropped (the agent resends from the
// returned length). It returns the log's new length.
func (l *Store) Append(job, replica string, off int64, data []byte) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.path(job, replica)
	size, err := fileSize(p)
	if err != nil {
		return 0, err
	}
	if off > size || off+int64(len(data)) <= size {
		return size, nil
	}
	data = data[size-off:]
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return size, fmt.Errorf("log of %s: %w", replica, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return size, fmt.Errorf("log of %s: %w", replica, err)
	}
	n, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return size + int64(n), fmt.Errorf("log of %s: %w", replica, err)
	}
	return size + int64(n), nil
}

// fileSize returns the size of a file, 0 if it does not exist.
func fileSize(p string) (int64, error) {
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("log: %w", err)
	}
	return st.Size(), nil
}

// File is one replica's log: the file Path holds its output.
type File struct {
	Replica       string
	Attempt, Rank int
	Path          string
}

// Files lists a job's replica logs by attempt, then node rank.
func (l *Store) Files(job string) ([]File, error) {
	ents, err := os.ReadDir(filepath.Join(l.dir, job))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", job, err)
	}
	var out []File
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".log")
		jid, attempt, rank, valid := api.ParseReplicaID(id)
		if !ok || !valid || jid != job {
			continue
		}
		out = append(out, File{Replica: id, Attempt: attempt, Rank: rank, Path: filepath.Join(l.dir, job, e.Name())})
	}
	slices.SortFunc(out, func(a, b File) int {
		return cmp.Or(cmp.Compare(a.Attempt, b.Attempt), cmp.Compare(a.Rank, b.Rank))
	})
	return out, nil
}

// Remove deletes the logs of job.
func (l *Store) Remove(job string) error {
	if err := os.RemoveAll(filepath.Join(l.dir, job)); err != nil {
		return fmt.Errorf("logs of %s: %w", job, err)
	}
	return nil
}
