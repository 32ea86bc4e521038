package eventlog

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"

	"github.com/gpusched/gpusched/core/model"
)

// Kind names an event.
type Kind string

// Event kinds. `alloc` is always the job's whole allocation after the event;
// preempt, finish and reject release all of it.
const (
	Cluster Kind = "cluster" // the cluster's GPUs, first line of a log
	Submit  Kind = "submit"  // a job arrives
	Start   Kind = "start"   // a job starts (or restarts) on alloc
	Resize  Kind = "resize"  // a running job's allocation changes to alloc
	Preempt Kind = "preempt" // a running job is stopped and queued again
	Finish  Kind = "finish"  // a job completes
	Reject  Kind = "reject"  // a job can never run on this cluster
	Pause   Kind = "pause"   // the placer holds a waiting job back (reason)
	// Unfinished closes the log for a job still waiting or running when the
	// run ends, with the reason; nothing happens to it after.
	Unfinished Kind = "unfinished"
)

// GPUInfo describes one GPU in a cluster event.
type GPUInfo struct {
	ID     string `json:"id"`
	Node   string `json:"node"`
	Type   string `json:"type"`
	MemMiB int    `json:"mem_mib"`
}

// NodeInfo describes one node's resources besides GPUs in a cluster event
// (only when the cluster models any): its capacity of each, in the units
// of docs/RESOURCES.md (cpu in millicores, memory and storage in bytes).
type NodeInfo struct {
	Node     string           `json:"node"`
	Capacity map[string]int64 `json:"capacity"`
}

// Event is one line of the log. Fields that do not apply to a kind are left
// zero and omitted.
type Event struct {
	T       model.Time
	Kind    Kind
	Job     string
	Alloc   []string
	GPUs    []GPUInfo  // cluster only
	Nodes   []NodeInfo // cluster only, when it models other resources
	Request *Request   // submit only
	Reason  string
}

// Request is the job description carried by a submit event.
type Request struct {
	GPUs     int
	MinGPUs  int
	MaxGPUs  int
	Model    string
	Steps    int64
	Duration model.Time
	GPUType  string
	Priority int
	// ReplicaGPUs is the GPUs of one replica (0 or 1: one per GPU), and
	// Requests what one replica asks of the cluster's other resources
	// (nil when nothing): a node holding k of the job's GPUs holds
	// ⌈k/ReplicaGPUs⌉ replicas.
	ReplicaGPUs int
	Requests    map[string]int64
}

// Writer writes events as JSON lines. Errors are sticky: after the first
// failed write, Emit does nothing and Close returns the error.
type Writer struct {
	w   *bufio.Writer
	buf []byte
	err error
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriterSize(w, 1<<16)} }

// Emit appends one event.
func (w *Writer) Emit(e Event) {
	if w.err != nil {
		return
	}
	w.buf = Append(w.buf[:0], e)
	w.buf = append(w.buf, '\n')
	_, w.err = w.w.Write(w.buf)
}

// Close flushes buffered events and returns the first error seen.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// Append appends e as a JSON object (without newline) to b. Keys come in a
// fixed order so that logs are byte-identical across runs.
func Append(b []byte, e Event) []byte {
	b = append(b, `{"t":`...)
	b = append(b, e.T.SecondsString()...)
	b = appendStr(append(b, `,"event":`...), string(e.Kind))
	if e.Job != "" {
		b = appendStr(append(b, `,"job":`...), e.Job)
	}
	if e.Kind == Cluster {
		g, _ := json.Marshal(e.GPUs) // plain structs of strings and ints: cannot fail
		b = append(append(b, `,"gpus":`...), g...)
		if len(e.Nodes) > 0 {
			n, _ := json.Marshal(e.Nodes) // strings and int maps, keys sorted: cannot fail
			b = append(append(b, `,"nodes":`...), n...)
		}
	}
	if r := e.Request; r != nil {
		b = appendRequest(b, r)
	}
	if e.Kind == Start || e.Kind == Resize {
		b = append(b, `,"alloc":[`...)
		for i, a := range e.Alloc {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendStr(b, a)
		}
		b = append(b, ']')
	}
	if e.Reason != "" {
		b = appendStr(append(b, `,"reason":`...), e.Reason)
	}
	return append(b, '}')
}

func appendRequest(b []byte, r *Request) []byte {
	b = strconv.AppendInt(append(b, `,"gpus":`...), int64(r.GPUs), 10)
	b = strconv.AppendInt(append(b, `,"min_gpus":`...), int64(r.MinGPUs), 10)
	b = strconv.AppendInt(append(b, `,"max_gpus":`...), int64(r.MaxGPUs), 10)
	if r.Model != "" {
		b = appendStr(append(b, `,"model":`...), r.Model)
	}
	if r.Steps > 0 {
		b = strconv.AppendInt(append(b, `,"steps":`...), r.Steps, 10)
	}
	if r.Duration > 0 {
		b = append(append(b, `,"duration_s":`...), r.Duration.SecondsString()...)
	}
	if r.GPUType != "" {
		b = appendStr(append(b, `,"gpu_type":`...), r.GPUType)
	}
	if r.Priority != 0 {
		b = strconv.AppendInt(append(b, `,"priority":`...), int64(r.Priority), 10)
	}
	if r.ReplicaGPUs > 1 {
		b = strconv.AppendInt(append(b, `,"replica_gpus":`...), int64(r.ReplicaGPUs), 10)
	}
	if len(r.Requests) > 0 {
		q, _ := json.Marshal(r.Requests) // an int map, keys sorted: cannot fail
		b = append(append(b, `,"requests":`...), q...)
	}
	return b
}

// appendStr appends s as json.Marshal quotes it: printable ASCII that it
// does not escape as is, anything else through json.Marshal.
func appendStr(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
