package shim

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

	"github.com/gpusched/gpusched/service/api"
)

// ProgressFile is the name of a replica's progress file in its directory
// (GPUSCHED_PROGRESS_FILE).
const ProgressFile = "progress"

// Limits of the progress file reader.
const (
	// progressTail is how many bytes before the read offset are kept to
	// tell an appended file from a rewritten one.
	progressTail = 64
	// progressChunk is the most read in one poll; a file that grew more
	// is read from its last progressChunk bytes.
	progressChunk = 1 << 20
)

// ProgressWatch is where the agent is in a replica's progress file: the
// offset after the last complete line read and the bytes just before it.
// A file whose bytes before the offset changed (or that got shorter) was
// rewritten and is read again from its start.
type ProgressWatch struct {
	Offset int64  `json:"offset"`
	Tail   []byte `json:"tail,omitempty"`
}

// poll reads the complete lines added to the file at path since the last
// poll and returns the reports among them, oldest first, and how many
// lines were not reports.
func (w *ProgressWatch) Poll(path string) ([]api.Progress, int, error) {
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
		*w = ProgressWatch{} // rewritten: read it all again
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
		if p, ok := ParseProgress(line); ok {
			out = append(out, p)
		} else {
			bad++
		}
	}
	return out, bad, nil
}

// tailMatches reports whether the bytes before the offset are still those
// last read.
func (w *ProgressWatch) tailMatches(f *os.File) bool {
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
func ParseProgress(line string) (api.Progress, bool) {
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

// progressPath is the progress file of the replica in dir.
func ProgressPath(dir string) string { return filepath.Join(dir, ProgressFile) }
