package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// progressFile is the name of a replica's progress file in its directory
// (GPUSCHED_PROGRESS_FILE).
const progressFile = "progress"

// Limits of the progress file reader.
const (
	// progressTail is how many bytes before the read offset are kept to
	// tell an appended file from a rewritten one.
	progressTail = 64
	// progressChunk is the most read in one poll; a file that grew more
	// is read from its last progressChunk bytes.
	progressChunk = 1 << 20
)

// progressWatch is where the agent is in a replica's progress file: the
// offset after the last complete line read and the bytes just before it.
// A file whose bytes before the offset changed (or that got shorter) was
// rewritten and is read again from its start.
type progressWatch struct {
	Offset int64  `json:"offset"`
	Tail   []byte `json:"tail,omitempty"`
}

// poll reads the complete lines added to the file at path since the last
// poll and returns the reports among them, oldest first, and how many
// lines were not reports.
func (w *progressWatch) poll(path string) ([]api.Progress, int, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("progress file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("progress file: %w", err)
	}
	size := fi.Size()
	if size < w.Offset || !w.tailMatches(f) {
		*w = progressWatch{} // rewritten: read it all again
	}
	from := max(w.Offset, size-progressChunk)
	data := make([]byte, size-from)
	if _, err := f.ReadAt(data, from); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("progress file: %w", err)
	}
	end := bytes.LastIndexByte(data, '\n') + 1
	if end == 0 {
		return nil, 0, nil // no complete new line yet
	}
	lines := data[:end]
	if from > w.Offset { // skipped ahead: drop the partial first line
		if i := bytes.IndexByte(lines, '\n'); i >= 0 {
			lines = lines[i+1:]
		}
	}
	w.Offset = from + int64(end)
	w.Tail = bytes.Clone(data[max(0, end-progressTail):end])
	var out []api.Progress
	bad := 0
	for line := range strings.Lines(string(lines)) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if p, ok := parseProgress(line); ok {
			out = append(out, p)
		} else {
			bad++
		}
	}
	return out, bad, nil
}

// tailMatches reports whether the bytes before the offset are still those
// last read.
func (w *progressWatch) tailMatches(f *os.File) bool {
	if len(w.Tail) == 0 {
		return true
	}
	got := make([]byte, len(w.Tail))
	_, err := f.ReadAt(got, w.Offset-int64(len(w.Tail)))
	return err == nil && bytes.Equal(got, w.Tail)
}

// parseProgress reads one line of a progress file: words "steps=N" and
// optionally "checkpoint=1" (or true/yes, 0/false/no), or a JSON object
// {"steps":N,"checkpoint":true}.
func parseProgress(line string) (api.Progress, bool) {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") {
		p, err := api.DecodeProgress([]byte(line))
		return p, err == nil
	}
	var p api.Progress
	seen := false
	for _, word := range strings.Fields(line) {
		k, v, _ := strings.Cut(word, "=")
		switch k {
		case "steps":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || seen {
				return api.Progress{}, false
			}
			p.Steps, seen = n, true
		case "checkpoint":
			switch strings.ToLower(v) {
			case "1", "true", "yes":
				p.Checkpoint = true
			case "0", "false", "no":
			default:
				return api.Progress{}, false
			}
		default:
			return api.Progress{}, false
		}
	}
	return p, seen
}

// pollProgress reads replica p's progress file and records what it
// reports in p's status; a new checkpoint is saved and reported at once,
// other progress goes with the next heartbeat.
func (a *Agent) pollProgress(p *proc) {
	if p.dir == "" {
		return
	}
	w := read(a.reps, p, func(p *proc) progressWatch { return p.progress })
	reps, bad, err := w.poll(progressPath(p.dir))
	if err != nil {
		a.log.Debug("read progress file", "replica", p.spec.ID, "err", err)
		return
	}
	if bad > 0 {
		a.log.Debug("progress file lines not understood (want \"steps=N [checkpoint=1]\")",
			"replica", p.spec.ID, "lines", bad)
	}
	now := time.Now()
	ckpt := false
	a.update(p, func(p *proc) {
		p.progress = w
		if len(reps) == 0 {
			return
		}
		cur := api.ReplicaProgress{}
		if p.status.Progress != nil {
			cur = *p.status.Progress
		}
		cur.Steps, cur.At = reps[len(reps)-1].Steps, now
		for _, r := range reps {
			if r.Checkpoint {
				cur.CheckpointSteps, cur.CheckpointAt, ckpt = r.Steps, &now, true
			}
		}
		p.status.Progress = &cur
	})
	if ckpt {
		a.save(p)
		a.report()
	}
}

// progressPath is the progress file of the replica in dir.
func progressPath(dir string) string { return filepath.Join(dir, progressFile) }
