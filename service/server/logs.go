package server

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"time"
)

// Log following: how long a follow goes on after the job ended while no
// more output arrives (agents ship output shortly after a replica exits),
// and how often it looks at the files when nothing signals.
const (
	logLinger = time.Second
	logPoll   = time.Second
	logRead   = 256 << 10
)

// handleLogs is GET /v1/jobs/{id}/logs[?follow=true]: the output of every
// replica of every attempt, in order of attempt and node rank. When the
// job has had more than one replica, each line starts with "[<replica>] ".
func (s *Server) handleLogs(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	follow, ok := parseBool(w, r, "follow")
	if !ok {
		return
	}
	if err := s.access.CheckLogs(caller(r), id); err != nil {
		s.writeErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	t := &tailer{s: s, job: id, off: map[string]int64{}, part: map[string][]byte{}}
	if !follow {
		if _, err := t.pass(w); err == nil {
			_ = t.flushParts(w)
		}
		return
	}
	s.follow(w, r, t)
}

// follow streams new output until the job is final and its logs have been
// quiet for logLinger, the client goes away or the server stops.
func (s *Server) follow(w http.ResponseWriter, r *http.Request, t *tailer) {
	flusher, _ := w.(http.Flusher)
	var quiet time.Time
	for {
		sig := s.sched.Logs().Changed()
		final, _, _ := s.sched.Logs().Status(t.job)
		wrote, err := t.pass(w)
		if err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if final {
			if wrote || quiet.IsZero() {
				quiet = time.Now()
			} else if time.Since(quiet) >= logLinger {
				_ = t.flushParts(w)
				return
			}
		}
		wait := logPoll
		if final {
			wait = logLinger / 4
		}
		select {
		case <-sig:
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		case <-s.sched.Done():
			_ = t.flushParts(w)
			return
		}
	}
}

// tailer reads a job's logs incrementally.
type tailer struct {
	s   *Server
	job string
	// prefix: lines get "[<replica>] "; decided with the first output.
	prefix  bool
	decided bool
	off     map[string]int64
	part    map[string][]byte // an unfinished last line, per replica
}

// pass writes the output added since the last pass; it reports whether
// it read anything.
func (t *tailer) pass(w io.Writer) (bool, error) {
	files, err := t.s.sched.Logs().Files(t.job)
	if err != nil || len(files) == 0 {
		return false, err
	}
	if !t.decided {
		_, multi, _ := t.s.sched.Logs().Status(t.job)
		t.prefix, t.decided = multi || len(files) > 1, true
	}
	read := false
	for _, f := range files {
		for {
			data, err := readFrom(f.Path, t.off[f.Replica])
			if err != nil {
				return read, err
			}
			if len(data) == 0 {
				break
			}
			read = true
			t.off[f.Replica] += int64(len(data))
			if err := t.write(w, f.Replica, data); err != nil {
				return read, err
			}
			if len(data) < logRead {
				break
			}
		}
	}
	return read, nil
}

// write writes one replica's new output, by whole lines when prefixing.
func (t *tailer) write(w io.Writer, replica string, data []byte) error {
	if !t.prefix {
		_, err := w.Write(data)
		return err
	}
	buf := append(t.part[replica], data...)
	var out bytes.Buffer
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		fmt.Fprintf(&out, "[%s] %s", replica, buf[:i+1])
		buf = buf[i+1:]
	}
	t.part[replica] = bytes.Clone(buf)
	_, err := w.Write(out.Bytes())
	return err
}

// flushParts writes the unfinished last lines, each ended by a newline.
func (t *tailer) flushParts(w io.Writer) error {
	for _, id := range slices.Sorted(maps.Keys(t.part)) {
		if p := t.part[id]; len(p) > 0 {
			if _, err := fmt.Fprintf(w, "[%s] %s\n", id, p); err != nil {
				return err
			}
		}
		delete(t.part, id)
	}
	return nil
}

// readFrom reads a file from offset off to its end, at most logRead bytes.
func readFrom(path string, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	return io.ReadAll(io.LimitReader(f, logRead))
}
