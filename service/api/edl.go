package api

import (
	"strings"
	"time"
)

// Seed 001's EDL primitives, as a service to a job's processes
// (docs/EDL.md): a master lock, a queue of data tasks with leases, and
// parameter-server slots. Requests are decoded strictly (Decode*); every
// TTL is in seconds, 0 < ttl_s ≤ MaxTTLSeconds.

// EDL limits.
const (
	// MaxTTLSeconds bounds every lease (a day).
	MaxTTLSeconds = 86400
	// MaxTasks bounds a job's task queue.
	MaxTasks = 100000
	// MaxTaskBytes bounds one task's data (a chunk's name or path).
	MaxTaskBytes = 4096
	// MaxPServers bounds a job's parameter-server slots.
	MaxPServers = 1024
	// MaxHolderBytes bounds a holder's name and address.
	MaxHolderBytes = 256
)

// MasterRequest asks for (or renews, or with Release gives up) the master
// role of a job: POST /v1/jobs/{id}/master.
type MasterRequest struct {
	// Holder names the asking process, e.g. its replica ID "j7.1.0".
	Holder string `json:"holder"`
	// Addr is where the other processes reach the master, e.g. "n1:8000"
	// (seed 001's /master/addr).
	Addr string `json:"addr,omitempty"`
	// TTLS is the lease: without a renewal within it the role is free.
	TTLS float64 `json:"ttl_s"`
	// Release gives the role up.
	Release bool `json:"release,omitempty"`
}

// Master is the master role of a job (GET and POST /v1/jobs/{id}/master).
type Master struct {
	// Granted: the request was granted (POST only).
	Granted bool `json:"granted"`
	// Holder is the current master ("" when the role is free).
	Holder string `json:"holder"`
	Addr   string `json:"addr,omitempty"`
	// Epoch counts the changes of holder: a new master has a new epoch.
	Epoch int64 `json:"epoch"`
	// ExpiresAt is when the role is free unless renewed.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// TaskQueueSpec registers a job's data tasks: POST /v1/jobs/{id}/tasks.
type TaskQueueSpec struct {
	// Tasks are the data chunks, one string each (a file, a shard
	// range); their indices are their positions.
	Tasks []string `json:"tasks"`
	// Passes is how many times every task is done (epochs); default 1.
	Passes int `json:"passes,omitempty"`
	// MaxFailures: a task that failed (or whose lease expired) this many
	// times is marked failed and not leased again; default 3.
	MaxFailures int `json:"max_failures,omitempty"`
	// TTLS is the default lease of a task; default 60.
	TTLS float64 `json:"ttl_s,omitempty"`
}

// TaskQueue is a job's task queue as GET /v1/jobs/{id}/tasks shows it.
type TaskQueue struct {
	Tasks       int     `json:"tasks"`
	Passes      int     `json:"passes"`
	MaxFailures int     `json:"max_failures"`
	TTLS        float64 `json:"ttl_s"`
	// Pass is the current pass, from 1.
	Pass int `json:"pass"`
	// Todo, Leased, Done and Failed count the tasks of the current pass.
	Todo   int `json:"todo"`
	Leased int `json:"leased"`
	Done   int `json:"done"`
	Failed int `json:"failed"`
	// DoneTotal counts the tasks done over every pass.
	DoneTotal int64 `json:"done_total"`
	// Finished: every pass is over.
	Finished bool `json:"finished"`
}

// LeaseRequest asks for the next task: POST /v1/jobs/{id}/tasks/lease.
type LeaseRequest struct {
	Holder string `json:"holder"`
	// TTLS overrides the queue's lease; 0: the queue's.
	TTLS float64 `json:"ttl_s,omitempty"`
	// Done reports the holder's previous task done before the lease (one
	// request per task); a stale report is a 409 and leases nothing.
	Done *TaskDone `json:"done,omitempty"`
}

// TaskDone names a leased task reported done with a lease request.
type TaskDone struct {
	Index int    `json:"index"`
	Lease string `json:"lease"`
}

// Lease states.
const (
	// LeaseGranted: Task holds the leased task.
	LeaseGranted = "leased"
	// LeaseWait: every remaining task of the pass is leased by others; ask
	// again after RetryAfterS.
	LeaseWait = "wait"
	// LeaseFinished: every pass is over.
	LeaseFinished = "finished"
)

// Lease answers a LeaseRequest.
type Lease struct {
	Status      string     `json:"status"`
	Task        *Task      `json:"task,omitempty"`
	RetryAfterS float64    `json:"retry_after_s,omitempty"`
	Queue       *TaskQueue `json:"queue,omitempty"`
}

// Task is one leased task.
type Task struct {
	Index int    `json:"index"`
	Data  string `json:"data"`
	Pass  int    `json:"pass"`
	// Lease is the token that reports it done or failed.
	Lease     string    `json:"lease"`
	ExpiresAt time.Time `json:"expires_at"`
	// Failures counts its earlier failures and expired leases.
	Failures int `json:"failures"`
}

// TaskReport reports a leased task done or failed: POST
// /v1/jobs/{id}/tasks/{index}/done or .../failed.
type TaskReport struct {
	Lease string `json:"lease"`
}

// PServerClaim claims a parameter-server slot: POST
// /v1/jobs/{id}/pservers/claim (the smallest free index below Desired, seed
// 001's /ps/<i>), or renews it: POST /v1/jobs/{id}/pservers/{index}/renew.
type PServerClaim struct {
	Holder string `json:"holder"`
	Addr   string `json:"addr,omitempty"`
	// Desired is the job's pserver count (seed 001's /ps_desired); claims
	// only.
	Desired int     `json:"desired,omitempty"`
	TTLS    float64 `json:"ttl_s"`
	// Checkpoint records where this pserver saves its parameters; the
	// next holder of the index finds it in the claim's answer.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Release frees the slot (renewals only).
	Release bool `json:"release,omitempty"`
}

// PServer is one slot.
type PServer struct {
	Index      int        `json:"index"`
	Holder     string     `json:"holder"`
	Addr       string     `json:"addr,omitempty"`
	Checkpoint string     `json:"checkpoint,omitempty"`
	Epoch      int64      `json:"epoch"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
}

// PServerList is GET /v1/jobs/{id}/pservers: the slots ever claimed, by
// index, and how many are held now.
type PServerList struct {
	PServers []PServer `json:"pservers"`
	Live     int       `json:"live"`
}

// checkHolder validates a holder name.
func checkHolder(h string) error {
	switch {
	case strings.TrimSpace(h) == "":
		return fieldErr("holder", "is required: the name of the asking process (its replica ID)")
	case len(h) > MaxHolderBytes:
		return fieldErr("holder", "longer than %d bytes", MaxHolderBytes)
	}
	return nil
}

// checkTTL validates a lease; zero is allowed when optional.
func checkTTL(ttl float64, optional bool) error {
	if ttl == 0 && optional {
		return nil
	}
	if !(ttl > 0 && ttl <= MaxTTLSeconds) {
		return fieldErr("ttl_s", "%g: want 0 < ttl_s <= %d", ttl, MaxTTLSeconds)
	}
	return nil
}

// DecodeMasterRequest decodes and checks a MasterRequest.
func DecodeMasterRequest(data []byte) (MasterRequest, error) {
	var r MasterRequest
	if err := decodeStrict(data, &r); err != nil {
		return r, err
	}
	if err := checkHolder(r.Holder); err != nil {
		return r, err
	}
	if len(r.Addr) > MaxHolderBytes {
		return r, fieldErr("addr", "longer than %d bytes", MaxHolderBytes)
	}
	return r, checkTTL(r.TTLS, r.Release)
}

// DecodeTaskQueueSpec decodes and checks a TaskQueueSpec, filling in its
// defaults.
func DecodeTaskQueueSpec(data []byte) (TaskQueueSpec, error) {
	var s TaskQueueSpec
	if err := decodeStrict(data, &s); err != nil {
		return s, err
	}
	switch {
	case len(s.Tasks) == 0:
		return s, fieldErr("tasks", "is required: at least one task")
	case len(s.Tasks) > MaxTasks:
		return s, fieldErr("tasks", "%d tasks: at most %d", len(s.Tasks), MaxTasks)
	case s.Passes < 0 || s.Passes > 10000:
		return s, fieldErr("passes", "%d: want 1..10000 (0: 1)", s.Passes)
	case s.MaxFailures < 0 || s.MaxFailures > 1000:
		return s, fieldErr("max_failures", "%d: want 1..1000 (0: 3)", s.MaxFailures)
	}
	for i, t := range s.Tasks {
		if len(t) > MaxTaskBytes {
			return s, fieldErr("tasks", "task %d: longer than %d bytes", i, MaxTaskBytes)
		}
	}
	if err := checkTTL(s.TTLS, true); err != nil {
		return s, err
	}
	s.Passes, s.MaxFailures = orInt(s.Passes, 1), orInt(s.MaxFailures, 3)
	if s.TTLS == 0 {
		s.TTLS = 60
	}
	return s, nil
}

// DecodeLeaseRequest decodes and checks a LeaseRequest.
func DecodeLeaseRequest(data []byte) (LeaseRequest, error) {
	var r LeaseRequest
	if err := decodeStrict(data, &r); err != nil {
		return r, err
	}
	if err := checkHolder(r.Holder); err != nil {
		return r, err
	}
	if r.Done != nil && (r.Done.Lease == "" || r.Done.Index < 0) {
		return r, fieldErr("done", "needs the task's index and lease")
	}
	return r, checkTTL(r.TTLS, true)
}

// DecodeTaskReport decodes and checks a TaskReport.
func DecodeTaskReport(data []byte) (TaskReport, error) {
	var r TaskReport
	if err := decodeStrict(data, &r); err != nil {
		return r, err
	}
	if r.Lease == "" {
		return r, fieldErr("lease", "is required: the token of the task's lease")
	}
	return r, nil
}

// DecodePServerClaim decodes and checks a PServerClaim; claim says whether
// it claims (Desired required) or renews.
func DecodePServerClaim(data []byte, claim bool) (PServerClaim, error) {
	var r PServerClaim
	if err := decodeStrict(data, &r); err != nil {
		return r, err
	}
	if err := checkHolder(r.Holder); err != nil {
		return r, err
	}
	switch {
	case claim && (r.Desired < 1 || r.Desired > MaxPServers):
		return r, fieldErr("desired", "%d: want 1..%d", r.Desired, MaxPServers)
	case claim && r.Release:
		return r, fieldErr("release", "a claim cannot release; POST /v1/jobs/{id}/pservers/{index}/renew")
	case len(r.Addr) > MaxHolderBytes || len(r.Checkpoint) > MaxTaskBytes:
		return r, fieldErr("addr", "addr or checkpoint too long")
	}
	return r, checkTTL(r.TTLS, r.Release)
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
