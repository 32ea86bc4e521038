package trace

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// Limits that keep a malformed or hostile trace from exhausting memory or
// overflowing model.Time.
const (
	// maxLine is the longest accepted line in bytes.
	maxLine = 1 << 20
	// maxGPUs is the largest accepted GPU count of one job.
	maxGPUs = 1 << 20
	// maxSeconds is the largest accepted time or duration: model.Horizon
	// (about 31,700 years).
	maxSeconds = float64(model.Horizon / model.Second)
	// headSize is how many bytes Read peeks at for format detection.
	headSize = 4096
)

// Format names.
const (
	formatAuto     = "auto"
	formatGavel    = "gavel"
	formatPhilly   = "philly"
	formatTiresias = "tiresias"
	formatPollux   = "pollux"
	formatJSONL    = "jsonl"
	formatAlibaba  = "alibaba"
)

// Formats lists the accepted --format names: "auto", "gavel", "philly",
// "tiresias", "pollux", "jsonl" and "alibaba".
func Formats() []string {
	return []string{formatAuto, formatGavel, formatPhilly, formatTiresias, formatPollux, formatJSONL, formatAlibaba}
}

// Error is a parse error. Error() returns "FILE:LINE: what is wrong"; LINE is
// 1-based, and ":LINE" is left out when the error is not about one line
// (Line == 0).
type Error struct {
	// File is the trace's name as given to Read or Detect.
	File string
	// Line is the 1-based line the error is about, or 0.
	Line int
	// Msg says what is wrong.
	Msg string
}

// Error formats the error as "FILE:LINE: MSG" (or "FILE: MSG").
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Read parses a whole trace in the given format ("auto" or "" to detect it
// with Detect) and returns its jobs sorted by submission time; jobs submitted
// at the same time keep their file order. name is used only in error
// messages (and, for "auto", for its extension). Every error is an *Error.
func Read(r io.Reader, name, format string) ([]model.JobSpec, error) {
	t, err := ReadTrace(r, name, format)
	if err != nil {
		return nil, err
	}
	return t.Jobs, nil
}

// Trace is a whole trace as ReadTrace read it.
type Trace struct {
	// Jobs are the trace's jobs, sorted as Read sorts them.
	Jobs []model.JobSpec
	// Format is the format read, "auto" resolved.
	Format string
	// Skipped counts the lines that the reader left out on purpose, by
	// reason (alibaba: tasks that share a GPU, CPU-only tasks); nil when
	// none were.
	Skipped map[string]int
	// WallClock reports that the jobs' durations are wall-clock times on
	// whichever GPU type ran them, which the trace does not say (alibaba):
	// a simulator should run them for that long on every type rather than
	// scale them from a reference type.
	WallClock bool
}

// ReadTrace is Read, returning the format read and what the reader left
// out besides the jobs.
func ReadTrace(r io.Reader, name, format string) (*Trace, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if format == formatAuto || format == "" {
		head, err := br.Peek(headSize)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, &Error{File: name, Msg: fmt.Sprintf("read: %v", err)}
		}
		if format, err = Detect(name, head); err != nil {
			return nil, err
		}
	}
	t := &Trace{Format: format}
	var err error
	switch format {
	case formatGavel:
		t.Jobs, err = readGavel(br, name)
	case formatPhilly:
		t.Jobs, err = readPhilly(br, name)
	case formatTiresias:
		t.Jobs, err = readTiresias(br, name)
	case formatPollux:
		t.Jobs, err = readPollux(br, name)
	case formatJSONL:
		t.Jobs, err = readJSONL(br, name)
	case formatAlibaba:
		t.Jobs, t.Skipped, err = readAlibaba(br, name)
		t.WallClock = true
	default:
		return nil, &Error{File: name, Msg: fmt.Sprintf("unknown trace format %q (want one of %s)",
			format, strings.Join(Formats(), ", "))}
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// finish checks that the jobs exist and that their IDs are unique (lines[i]
// is job i's line, for the message), and sorts them by submission time.
func finish(name string, jobs []model.JobSpec, lines []int) ([]model.JobSpec, error) {
	if len(jobs) == 0 {
		return nil, &Error{File: name, Msg: "no jobs in the trace"}
	}
	seen := make(map[string]int, len(jobs))
	for i := range jobs {
		if first, dup := seen[jobs[i].ID]; dup {
			return nil, &Error{File: name, Line: lines[i],
				Msg: fmt.Sprintf("duplicate id %s (first on line %d)", quote([]byte(jobs[i].ID)), first)}
		}
		seen[jobs[i].ID] = lines[i]
	}
	return sortBySubmit(jobs), nil
}

// sortBySubmit sorts jobs by Submit, keeping the file order of ties. It sorts
// indices rather than moving the (large) specs around repeatedly.
func sortBySubmit(jobs []model.JobSpec) []model.JobSpec {
	bySubmit := func(a, b model.JobSpec) int { return cmp.Compare(a.Submit, b.Submit) }
	if slices.IsSortedFunc(jobs, bySubmit) {
		return jobs
	}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(jobs[a].Submit, jobs[b].Submit); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	out := make([]model.JobSpec, len(jobs))
	for i, k := range order {
		out[i] = jobs[k]
	}
	return out
}

// indexIDs returns the decimal strings "0" … n-1, all slicing one string, so
// that a large trace costs two allocations for its IDs instead of n.
func indexIDs(n int) []string {
	buf := make([]byte, 0, n*6)
	ends := make([]int, n)
	for i := range n {
		buf = strconv.AppendInt(buf, int64(i), 10)
		ends[i] = len(buf)
	}
	all := string(buf)
	ids := make([]string, n)
	start := 0
	for i, end := range ends {
		ids[i] = all[start:end]
		start = end
	}
	return ids
}

// atLeastOneMilli applies the zero-duration rule: a measured duration that is
// zero (or rounds to zero milliseconds) becomes 1 ms, so that every job has
// positive work and finishes as soon as it starts.
func atLeastOneMilli(d model.Time) model.Time {
	return max(d, 1)
}
