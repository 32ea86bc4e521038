package scheduler

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

// logStore keeps replica output under dir/<job>/<replica>.log. Appends
// are not fsynced: a crash may lose the last chunks of a log, never a job.
type logStore struct {
	dir string
	mu  sync.Mutex
}

func newLogStore(dir string) *logStore { return &logStore{dir: dir} }

// path returns the file of a replica's log. Job and replica IDs are
// validated by the caller ("j<N>", "j<N>.<attempt>.<rank>").
func (l *logStore) path(job, replica string) string {
	return filepath.Join(l.dir, job, replica+".log")
}

// append writes data, which starts at offset off of the replica's log, at
// the log's current length: the part before it is already there, and a
// chunk that starts beyond it is dropped (the agent resends from the
// returned length). It returns the log's new length.
func (l *logStore) append(job, replica string, off int64, data []byte) (int64, error) {
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

// LogFile is one replica's log: the file Path holds its output.
type LogFile struct {
	Replica       string
	Attempt, Rank int
	Path          string
}

// files lists a job's replica logs by attempt, then node rank.
func (l *logStore) files(job string) ([]LogFile, error) {
	ents, err := os.ReadDir(filepath.Join(l.dir, job))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", job, err)
	}
	var out []LogFile
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".log")
		jid, attempt, rank, valid := parseReplicaID(id)
		if !ok || !valid || jid != job {
			continue
		}
		out = append(out, LogFile{Replica: id, Attempt: attempt, Rank: rank, Path: filepath.Join(l.dir, job, e.Name())})
	}
	slices.SortFunc(out, func(a, b LogFile) int {
		return cmp.Or(cmp.Compare(a.Attempt, b.Attempt), cmp.Compare(a.Rank, b.Rank))
	})
	return out, nil
}

// AppendLog stores a chunk of a replica's output that node name uploads
// and returns the log's length (logStore.append: a chunk resent or
// overlapping what is there appends only what is new, one beyond the end
// is dropped). The chunk must name a replica of its job and a
// non-negative offset (an *api.FieldError otherwise); ErrNotRegistered
// for a node the scheduler does not know; ErrNotFound for a replica of an
// unknown job or of an attempt that has not started.
func (s *Scheduler) AppendLog(name string, c api.LogChunk) (api.LogAck, error) {
	job, attempt, _, ok := parseReplicaID(c.Replica)
	if !ok || job != c.Job {
		return api.LogAck{}, &api.FieldError{Field: "replica",
			Message: fmt.Sprintf("replica %q is not a replica ID of job %q", c.Replica, c.Job)}
	}
	if c.Offset < 0 {
		return api.LogAck{}, &api.FieldError{Field: "offset", Message: fmt.Sprintf("offset %d is negative", c.Offset)}
	}
	s.mu.Lock()
	known, j := s.nodes[name] != nil, s.jobs[job]
	ok = j != nil && attempt <= j.rec.Attempt
	s.mu.Unlock()
	switch {
	case !known:
		return api.LogAck{}, notRegistered(name)
	case !ok:
		return api.LogAck{}, notFound("no replica %q", c.Replica)
	}
	n, err := s.logs.append(job, c.Replica, c.Offset, c.Data)
	if err != nil {
		return api.LogAck{}, err
	}
	s.logSignal.fire()
	return api.LogAck{Length: n}, nil
}

// LogFiles lists the replica logs of job id, in order of attempt and node
// rank (none yet: an empty list).
func (s *Scheduler) LogFiles(id string) ([]LogFile, error) { return s.logs.files(id) }

// LogStatus says whether job id has ended and whether it has had more than
// one replica (over all its attempts); ErrNotFound.
func (s *Scheduler) LogStatus(id string) (final, multi bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return false, false, noJob(id)
	}
	return j.rec.State.Final(), j.rec.Attempt > 1 || len(j.rec.Replicas) > 1, nil
}

// LogsChanged returns a channel closed the next time a log grows or a job
// changes state (what a log follower waits for).
func (s *Scheduler) LogsChanged() <-chan struct{} { return s.logSignal.wait() }
