package model

// JobSpec is what a user or a trace asks for. A job's work is either Steps of
// Model (speed from the throughput matrix) or Duration measured on the
// reference GPU type.
type JobSpec struct {
	// ID is unique within a trace or a server.
	ID string
	// Submit is the submission time.
	Submit Time
	// GPUs is the requested GPU count; MinGPUs and MaxGPUs bound an elastic
	// job (both equal GPUs for a rigid job).
	GPUs, MinGPUs, MaxGPUs int
	// Model names the job type (a key of the throughput matrix); may be empty.
	Model string
	// Steps is the work in training steps (with Model), or 0.
	Steps int64
	// Duration is the run time on the reference GPU type at GPUs GPUs, or 0.
	Duration Time
	// GPUType, when set, restricts the job to that GPU type.
	GPUType string
	// Priority: higher is more important.
	Priority int
	// User owns the job; informational.
	User string
	// Queue names the team queue the job belongs to (package quota: quota,
	// weight and fair share per queue); empty means the default queue. Not
	// to be confused with Job.Queue, the level a queue policy keeps.
	Queue string
	// Group is the trace's grouping of the job, when it has one (Philly:
	// the virtual cluster); a simulator may make it the job's Queue.
	Group string
	// PeakMemMiB is the job's peak memory per GPU; 0 means unknown.
	PeakMemMiB int
	// ReplicaGPUs is the number of GPUs of one replica (worker, trainer),
	// the unit by which an elastic job grows and shrinks; 0 means 1. GPUs,
	// MinGPUs and MaxGPUs are multiples of it.
	ReplicaGPUs int
	// Requests is what one replica asks for besides its GPUs (CPU,
	// memory, named resources; see Resources); nil asks for nothing. Where
	// the cluster models a resource, a node holds a job's replicas only
	// while their requests fit what is left of it (Cluster.Request); seed
	// 001 breaks fulfillment ties by CPU and memory.
	Requests Resources
	// Scaling, when set, is the job's measured speed by GPU count on the
	// reference GPU type, in any consistent unit (a trace that names a
	// profiled application gives it, e.g. Pollux's step times). It is
	// sorted by GPUs; a simulator scales the job's speed at n GPUs by
	// Scaling(n)/Scaling(GPUs) instead of by the throughput matrix.
	Scaling []ScalePoint
	// DatasetMB is the size of the job's training data in megabytes (10^6
	// bytes), copied from its storage device to its nodes when it starts
	// (seed 002); 0 means nothing to stage.
	DatasetMB int64
	// Upload is the job's data upload address (seed 002): where its data
	// comes from. The network model gives it the fastest storage interface
	// as seen from there; empty means the interfaces' own figures.
	Upload string
}

// ScalePoint is a job's speed at one GPU count.
type ScalePoint struct {
	GPUs int
	Rate float64
}

// Replica returns the GPUs of one replica (at least 1).
func (s *JobSpec) Replica() int { return max(s.ReplicaGPUs, 1) }

// Elastic reports whether the job may run with a varying GPU count.
func (s *JobSpec) Elastic() bool { return s.MinGPUs != s.MaxGPUs }

// JobState is where a job is in its life.
type JobState uint8

// Job states.
const (
	// Waiting jobs are queued (never started, or preempted).
	Waiting JobState = iota
	// Running jobs hold GPUs.
	Running
	// Finished jobs completed their work.
	Finished
	// Rejected jobs can never run on this cluster.
	Rejected
)

// String returns the state's name.
func (s JobState) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Running:
		return "running"
	case Finished:
		return "finished"
	case Rejected:
		return "rejected"
	}
	return "unknown"
}

// Job is a job's spec plus its run-time status. The shell owns and updates
// it; the engine only reads it.
type Job struct {
	// req is Cluster.Request of the spec for cluster reqOf, set when the
	// job enters a State.
	req   Vec
	reqOf *Cluster
	// holds is, per GPU type of reqOf, Cluster.Holds for the job's
	// request (State.Holds), filled on first use.
	holds []int32

	Spec JobSpec
	// Seq is the job's arrival rank, unique; it breaks every tie.
	Seq int
	// Model indexes the profile's job types, or -1 when the job has none.
	Model int
	// Work is the job's total work in profile units (steps, or seconds on the
	// reference type for duration jobs).
	Work float64
	// State is the job's life-cycle state.
	State JobState
	// Alloc is the job's current allocation (empty unless Running).
	Alloc []GPU
	// on is the GPU type of Alloc on cluster onOf, set when a state gives
	// the job its allocation; onAt is then &Alloc[0] (State.TypeOn). The
	// cluster, not the state: a job must not keep a state that a shell
	// has dropped alive. Beside State and Alloc: the passes over the
	// running jobs read them together.
	on   int
	onOf *Cluster
	onAt *GPU

	// Done is the work completed as of Mark. From Resume (>= Mark) on, a
	// running job progresses at Rate work units per second.
	Done   float64
	Mark   Time
	Resume Time
	Rate   float64

	// FirstStart is the time of the first start, or -1.
	FirstStart Time
	// LastStart is when the current execution period began (the most recent
	// start, resize or migration).
	LastStart Time
	// Queued is when the job last entered the waiting queue (its submit
	// time, or its last preemption).
	Queued Time
	// Queue is the job's queue under the current policy (hlas: 0 = Q1, 1 =
	// Q2; tiresias: the queue level). Shells set it from Plan.Updates.
	Queue int
	// Periods are the job's closed execution periods since its history was
	// last reset (seed 003, S4: "persist each allocation").
	Periods []Period
	// ResetAt is when the history was last reset; the open period of a
	// running job counts from max(LastStart, ResetAt).
	ResetAt Time
	// Preemptions and Resizes count how often the job was stopped or resized.
	Preemptions, Resizes int
	// Expansions and Shrinks count the resizes that grew or shrank the job;
	// LastExpand and LastShrink are when the last of each happened (-1:
	// never). Seed 000 orders its candidates by them.
	Expansions, Shrinks    int
	LastExpand, LastShrink Time
	// Checkpoint is the time of the job's most recent checkpoint, or -1
	// when it has none. A stopped job restarts from its latest checkpoint,
	// or from its last start (LostWork); the engine prefers to stop the
	// job that loses the least work. The service sets it from the job's
	// progress reports; the simulator leaves it at -1 (its preemptions lose
	// no work).
	Checkpoint Time
}

// NewJob returns a waiting job for spec with the given arrival rank, model
// index and total work.
func NewJob(spec JobSpec, seq, model int, work float64) *Job {
	return &Job{Spec: spec, Seq: seq, Model: model, Work: work, FirstStart: -1, Queued: spec.Submit,
		LastExpand: -1, LastShrink: -1, Checkpoint: -1}
}

// LostWork returns the run time that a running job would lose if it were
// stopped at now: the time since its most recent checkpoint or, when it has
// none since then, since its current execution period began (LastStart: a
// start, resize or migration resumes from the latest checkpoint), that is
// now - max(Checkpoint, LastStart), never negative. It is 0 for a job that
// is not running.
func (j *Job) LostWork(now Time) Time {
	if j.State != Running {
		return 0
	}
	return max(now-max(j.Checkpoint, j.LastStart), 0)
}

// CountResize records a resize at now from the job's current allocation to
// one of n GPUs in Resizes, Expansions or Shrinks and LastExpand or
// LastShrink. Shells call it before replacing Alloc.
func (j *Job) CountResize(now Time, n int) {
	j.Resizes++
	switch {
	case n > len(j.Alloc):
		j.Expansions++
		j.LastExpand = now
	case n < len(j.Alloc):
		j.Shrinks++
		j.LastShrink = now
	}
}

// Period is one stretch of execution on one allocation.
type Period struct {
	Start, End Time
	// Type is the GPU type index, GPUs the GPU count.
	Type, GPUs int
}

// EndPeriod closes the running job's current execution period at now and
// opens the next one there (shells call it when a job is preempted, resized,
// migrated or finishes). It returns the GPU-milliseconds the period held.
func (j *Job) EndPeriod(now Time, c *Cluster) Time {
	p := Period{Start: max(j.LastStart, j.ResetAt), End: now, Type: c.TypeOf(j.Alloc[0]), GPUs: len(j.Alloc)}
	j.Periods = append(j.Periods, p)
	held := (now - j.LastStart) * Time(p.GPUs)
	j.LastStart = now
	return held
}

// Attained returns the job's attained service at now since its last reset:
// Σ period length (s) × GPUs × weight(type), including the open period of a
// running job. Seed 003 weighs by rated performance; Tiresias and LAS use
// weight 1.
func (j *Job) Attained(now Time, c *Cluster, weight func(t int) float64) float64 {
	var p float64
	for _, q := range j.Periods {
		p += (q.End - q.Start).Seconds() * float64(q.GPUs) * weight(q.Type)
	}
	if start := max(j.LastStart, j.ResetAt); j.State == Running && now > start {
		p += (now - start).Seconds() * float64(len(j.Alloc)) * weight(c.TypeOf(j.Alloc[0]))
	}
	return p
}

// RunTime returns how long the job has run since its last reset, at now.
func (j *Job) RunTime(now Time) Time {
	var d Time
	for _, q := range j.Periods {
		d += q.End - q.Start
	}
	if start := max(j.LastStart, j.ResetAt); j.State == Running && now > start {
		d += now - start
	}
	return d
}

// ResetHistory forgets the job's execution periods (seed 003, S2: a
// starving job's attained service is reset to 0).
func (j *Job) ResetHistory(now Time) {
	j.Periods, j.ResetAt = nil, now
}

// DoneAt returns the work the job has completed at now.
func (j *Job) DoneAt(now Time) float64 {
	if j.State != Running || now <= j.Resume {
		return j.Done
	}
	d := j.Done + j.Rate*(now-j.Resume).Seconds()
	return min(d, j.Work)
}

// Remaining returns the work left at now.
func (j *Job) Remaining(now Time) float64 { return max(j.Work-j.DoneAt(now), 0) }

// Profile gives job speeds. Speed returns the work units per second that j
// makes on n GPUs of cluster type t; 0 means the job cannot run there.
type Profile interface {
	Speed(j *Job, t, n int) float64
}
