package audit

import (
	"bufio"
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

	// Unfinished lists the jobs submitted but neither finished nor rejected,
	// in submit order; Running is the subset still holding GPUs at the end of
	// the log. Whether either is acceptable is the caller's decision.
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
	c := newChecker()
	br := bufio.NewReader(r)
	n := 0
	for {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return Result{}, fmt.Errorf("%s: read: %w", name, err)
		}
		if len(b) > 0 {
			n++
			if lerr := c.line(n, b); lerr != nil {
				return Result{}, fmt.Errorf("%s:%d: %w", name, n, lerr)
			}
		}
		if err != nil {
			break
		}
	}
	if n == 0 {
		return Result{}, fmt.Errorf("%s: empty log: want a cluster event on line 1", name)
	}
	return c.result(), nil
}

// line checks line number n (1-based), whose text is b.
func (c *checker) line(n int, b []byte) error {
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.New("empty line")
	}
	var e rawEvent
	if err := json.Unmarshal(b, &e); err != nil {
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
	return c.apply(n, &e)
}

// apply dispatches e, read from line n, on its kind.
func (c *checker) apply(n int, e *rawEvent) error {
	switch e.Event {
	case "cluster", "submit", "start", "resize", "preempt", "finish", "reject", "pause":
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
	default: // preempt, finish
		return c.stop(e, j)
	}
}

// secs formats seconds for messages, without trailing zeros.
func secs(t float64) string { return strconv.FormatFloat(t, 'f', -1, 64) }
