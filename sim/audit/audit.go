package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Result holds what an event log implies. Times are in seconds, GPUUtil is a
// fraction; the definitions are DESIGN.md's.
type Result struct {
	Jobs        int     // submit events
	Completed   int     // finish events
	Rejected    int     // reject events
	AvgJCT      float64 // mean of finish − submit over finished jobs
	P50JCT      float64 // nearest-rank median of JCT over finished jobs
	P99JCT      float64 // nearest-rank 99th percentile of JCT over finished jobs
	AvgQueue    float64 // mean of first start − submit over jobs that started
	Makespan    float64 // last finish − first submit (0 without a finish)
	GPUSeconds  float64 // GPU-seconds held by all jobs; running jobs count to End
	GPUUtil     float64 // GPUSeconds ÷ (ClusterGPUs × Makespan), 0 if undefined
	Preemptions int     // preempt events
	Resizes     int     // resize events
	ClusterGPUs int     // GPUs in the cluster event
	End         float64 // t of the last event

	// Unfinished lists the jobs reported unfinished (neither finished nor
	// rejected when the run ended), in submit order; Running is the subset
	// that held GPUs then.
	Unfinished []string
	Running    []string
}

// rawEvent is one line of the log as far as the audit understands it.
// Unknown fields are ignored; "gpus" means the cluster's GPUs in a cluster
// event and the requested count in a submit event.
type rawEvent struct {
	T       *float64        `json:"t"`
	Event   string          `json:"event"`
	Job     string          `json:"job"`
	Alloc   []string        `json:"alloc"`
	GPUs    json.RawMessage `json:"gpus"`
	MinGPUs *int            `json:"min_gpus"`
	MaxGPUs *int            `json:"max_gpus"`
	GPUType string          `json:"gpu_type"`
	Reason  string          `json:"reason"`
	// Resources besides GPUs (resources.go).
	Nodes       json.RawMessage  `json:"nodes"`
	ReplicaGPUs *int             `json:"replica_gpus"`
	Requests    map[string]int64 `json:"requests"`
}

// gpuInfo is one GPU of a cluster event.
type gpuInfo struct {
	ID   string `json:"id"`
	Node string `json:"node"`
	Type string `json:"type"`
}

// Check reads a whole event log from r and verifies its invariants. It
// returns the first violation as an error naming the line, as in
// "events.jsonl:123: GPU n0/1 given to j7 while held by j3", where name is
// the log's name for messages. On success the Result holds the figures
// recomputed from the log.
func Check(r io.Reader, name string) (Result, error) {
	s := NewStream(name)
	if _, err := io.Copy(s, r); err != nil {
		if s.err == nil {
			return Result{}, fmt.Errorf("%s: read: %w", name, err)
		}
		return Result{}, err
	}
	return s.Close()
}

// Stream checks an event log as it is written: a shell writes the log to it
// (alone or beside a file, through io.MultiWriter) and learns of the first
// violation from Write, or from Close at the end. It checks exactly what
// Check checks.
type Stream struct {
	name    string
	c       *checker
	n       int    // lines checked
	partial []byte // the start of a line not yet ended
	err     error  // the first violation, sticky
}

// NewStream returns a Stream for a log called name in messages.
func NewStream(name string) *Stream { return &Stream{name: name, c: newChecker()} }

// Write checks every complete line in p (and in earlier partial writes). It
// returns the first violation, naming the log and line; after it every
// Write fails the same way.
func (s *Stream) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	written := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.partial = append(s.partial, p...)
			break
		}
		line := p[:i+1]
		if len(s.partial) > 0 {
			line = append(s.partial, line...)
			s.partial = s.partial[:0]
		}
		p = p[i+1:]
		if err := s.line(line); err != nil {
			return 0, err
		}
	}
	return written, nil
}

// line checks one line.
func (s *Stream) line(b []byte) error {
	s.n++
	if err := s.c.line(s.n, b); err != nil {
		s.err = fmt.Errorf("%s:%d: %w", s.name, s.n, err)
	}
	return s.err
}

// Close checks a last line without a newline and the end of the log (it
// has a cluster event; every job is finished, rejected or reported
// unfinished) and returns the figures the log implies.
func (s *Stream) Close() (Result, error) {
	if s.err == nil && len(s.partial) > 0 {
		s.line(s.partial)
		s.partial = nil
	}
	if s.err != nil {
		return Result{}, s.err
	}
	if s.n == 0 {
		return Result{}, fmt.Errorf("%s: empty log: want a cluster event on line 1", s.name)
	}
	if err := s.c.end(); err != nil {
		return Result{}, fmt.Errorf("%s: at the end: %w", s.name, err)
	}
	return s.c.result(), nil
}

// line checks line number n (1-based), whose text is b.
func (c *checker) line(n int, b []byte) error {
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.New("empty line")
	}
	e := &c.ev // nothing keeps e past the line: one event reused
	*e = rawEvent{}
	if err := decode(b, e); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	switch {
	case e.T == nil:
		return errors.New("missing t")
	case e.Event == "":
		return errors.New("missing event")
	case *e.T < 0:
		return fmt.Errorf("negative t %s", secs(*e.T))
	case n > 1 && *e.T < c.now:
		return fmt.Errorf("t %s before the previous line's t %s", secs(*e.T), secs(c.now))
	case n == 1 && e.Event != "cluster":
		return fmt.Errorf("first event is %q, want \"cluster\"", e.Event)
	}
	c.now = *e.T
	return c.apply(n, e)
}

// apply dispatches e, read from line n, on its kind.
func (c *checker) apply(n int, e *rawEvent) error {
	switch e.Event {
	case "cluster", "submit", "start", "resize", "preempt", "finish", "reject", "pause", "unfinished":
	default:
		return fmt.Errorf("unknown event %q", e.Event)
	}
	if len(e.Alloc) > 0 && e.Event != "start" && e.Event != "resize" {
		return fmt.Errorf("%s event carries an alloc; only start and resize do", e.Event)
	}
	switch e.Event {
	case "cluster":
		if n > 1 {
			return errors.New("cluster event after line 1")
		}
		return c.cluster(e)
	case "submit":
		return c.submit(n, e)
	default:
		j, err := c.jobOf(e)
		if err != nil {
			return err
		}
		return c.transition(e, j)
	}
}

// transition applies a job event other than submit to j.
func (c *checker) transition(e *rawEvent, j *job) error {
	switch e.Event {
	case "start":
		return c.start(e, j)
	case "resize":
		return c.resize(e, j)
	case "reject":
		return c.reject(e, j)
	case "pause":
		return c.pause(j)
	case "unfinished":
		return c.unfinished(e, j)
	default: // preempt, finish
		return c.stop(e, j)
	}
}

// secs formats seconds for messages, without trailing zeros.
func secs(t float64) string { return strconv.FormatFloat(t, 'f', -1, 64) }
