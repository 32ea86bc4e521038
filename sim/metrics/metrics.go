package metrics

import (
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/model"
)

// JobRecord is the outcome of one job in a run. Start and Finish are -1 when
// the job never started or never finished.
type JobRecord struct {
	ID          string
	Submit      model.Time
	Start       model.Time // first start
	Finish      model.Time
	GPUs        int    // GPUs held at the first start
	GPUType     string // GPU type of the first allocation
	Preemptions int    // stops, migrations included
	Migrations  int    // moves to other GPUs (a stop and a start at once)
	Resizes     int
	GPUTime     model.Time // GPU-milliseconds held over the whole run
	Rejected    bool
	// Reason says why a rejected job can never run, or why an unfinished
	// one (neither finished nor rejected when the run ended) is still
	// waiting or running; empty for a finished job.
	Reason string
	// EnergyKWh is the energy attributed to the job (docs/ENERGY.md), in
	// kWh; 0 when the run accounted no energy.
	EnergyKWh float64
	// Queue is the job's team queue (package quota), "" when the run has
	// none.
	Queue string
	// Service is the GPU-seconds the job held weighted by each GPU type's
	// speed for it (quota.Weight: 1 on its fastest type).
	Service float64
	// Reclaimed counts the job's preemptions that gave another queue its
	// guaranteed quota back.
	Reclaimed int
}

// Completed reports whether the job finished.
func (r *JobRecord) Completed() bool { return r.Finish >= 0 }

// Unfinished reports whether the job neither finished nor was rejected.
func (r *JobRecord) Unfinished() bool { return !r.Completed() && !r.Rejected }

// JCT returns finish − submit (only meaningful when Completed).
func (r *JobRecord) JCT() model.Time { return r.Finish - r.Submit }

// Sample is the cluster's occupancy from T until the next sample.
type Sample struct {
	T        model.Time
	BusyGPUs int
	Queued   int
	// PowerW is the cluster's draw in watts (0 when the run accounted no
	// energy).
	PowerW float64
}

// Summary is the run's headline figures; the JSON keys are DESIGN.md's.
// Times are in seconds, utilisation a fraction.
type Summary struct {
	Policy    string `json:"policy"`
	Placer    string `json:"placer"`
	Scaler    string `json:"scaler"`
	Jobs      int    `json:"jobs"`
	Completed int    `json:"completed"`
	Rejected  int    `json:"rejected"`
	// Unfinished counts the jobs neither finished nor rejected when the
	// run ended (still waiting or running).
	Unfinished  int     `json:"unfinished"`
	AvgJCT      float64 `json:"avg_jct_s"`
	P50JCT      float64 `json:"p50_jct_s"`
	P99JCT      float64 `json:"p99_jct_s"`
	AvgQueue    float64 `json:"avg_queue_s"`
	Makespan    float64 `json:"makespan_s"`
	GPUUtil     float64 `json:"gpu_util"`
	Preemptions int     `json:"preemptions"`
	Migrations  int     `json:"migrations"`
	Resizes     int     `json:"resizes"`
	// EnergyKWh is the energy the cluster drew during the run, in kWh
	// (docs/ENERGY.md). Summarize leaves it nil; the caller that accounted
	// energy sets it. nil means unknown (a GPU type without power
	// figures): the JSON summary then has no energy_kwh key.
	EnergyKWh *float64 `json:"energy_kwh,omitempty"`
	// RejectedReasons and UnfinishedReasons count the rejected and the
	// unfinished jobs by JobRecord.Reason; empty maps are left out of the
	// JSON summary.
	RejectedReasons   map[string]int `json:"rejected_reasons,omitempty"`
	UnfinishedReasons map[string]int `json:"unfinished_reasons,omitempty"`
	// Reclaims, JainIndex and Queues describe the teams' queues of a run
	// that has them (docs/QUEUES.md); nil or empty, and left out of the
	// JSON summary, otherwise. Reclaims counts the preemptions that gave a
	// queue its guaranteed quota back; JainIndex is the time-averaged
	// Jain's fairness index over the backlogged queues' normalised shares
	// (nil when two queues were never backlogged at once).
	Reclaims  *int           `json:"reclaims,omitempty"`
	JainIndex *float64       `json:"jain_index,omitempty"`
	Queues    []QueueSummary `json:"queues,omitempty"`
	// Skipped counts the trace's tasks that its reader left out on
	// purpose, and SkippedReasons the same by reason (the Alibaba trace's
	// GPU-sharing and CPU-only tasks, docs/TRACES.md); nil and left out of
	// the JSON summary for a trace that leaves nothing out.
	Skipped        *int           `json:"skipped,omitempty"`
	SkippedReasons map[string]int `json:"skipped_reasons,omitempty"`
	// ResourceUtil, StrandedGPUs, StrandedGPUShare, StrandedGPUsWaiting
	// and StructuralStrandedGPUs describe a cluster that models resources
	// besides GPUs (Resources; docs/SIM.md), and are left out otherwise:
	// each resource's time-averaged utilisation (held ÷ capacity over the
	// makespan, as gpu_util), the time-averaged count of stranded GPUs,
	// that count ÷ the cluster's GPUs, the same average over the time when
	// some job waits (nil when none ever did), and the GPUs stranded on
	// the empty cluster (nodes whose capacity cannot serve all their GPUs).
	ResourceUtil           map[string]float64 `json:"resource_util,omitempty"`
	StrandedGPUs           *float64           `json:"stranded_gpus,omitempty"`
	StrandedGPUShare       *float64           `json:"stranded_gpu_share,omitempty"`
	StrandedGPUsWaiting    *float64           `json:"stranded_gpus_waiting,omitempty"`
	StructuralStrandedGPUs *int               `json:"structural_stranded_gpus,omitempty"`
}

// QueueSummary is one queue's part of a run.
type QueueSummary struct {
	Name      string  `json:"name"`
	Weight    float64 `json:"weight"`
	Jobs      int     `json:"jobs"`
	Completed int     `json:"completed"`
	// AvgJCT is the mean JCT of the queue's completed jobs, in seconds.
	AvgJCT float64 `json:"avg_jct_s"`
	// GPUHours are the GPU-hours its jobs held; NormGPUHours the same
	// weighted by each GPU type's speed for the job (JobRecord.Service).
	GPUHours     float64 `json:"gpu_hours"`
	NormGPUHours float64 `json:"norm_gpu_hours"`
	// Share is its part of all queues' normalised GPU-hours.
	Share float64 `json:"share"`
	// Reclaimed counts its jobs' preemptions for other queues' quota.
	Reclaimed int `json:"reclaimed"`
}

// SummarizeQueues summarises recs per queue; names and weights give the
// queues in order (a record whose queue is not among them is left out).
func SummarizeQueues(recs []JobRecord, names []string, weights []float64) []QueueSummary {
	out := make([]QueueSummary, len(names))
	idx := map[string]int{}
	for i, n := range names {
		out[i] = QueueSummary{Name: n, Weight: weights[i]}
		idx[n] = i
	}
	jct := make([]float64, len(names))
	var total float64
	for i := range recs {
		r := &recs[i]
		q, ok := idx[r.Queue]
		if !ok {
			continue
		}
		s := &out[q]
		s.Jobs++
		s.GPUHours += r.GPUTime.Seconds() / 3600
		s.NormGPUHours += r.Service / 3600
		total += r.Service / 3600
		s.Reclaimed += r.Reclaimed
		if r.Completed() {
			s.Completed++
			jct[q] += r.JCT().Seconds()
		}
	}
	for i := range out {
		if out[i].Completed > 0 {
			out[i].AvgJCT = jct[i] / float64(out[i].Completed)
		}
		if total > 0 {
			out[i].Share = out[i].NormGPUHours / total
		}
	}
	return out
}

// Summarize computes the summary of recs on a cluster of totalGPUs GPUs.
// JCT percentiles use the nearest-rank method over completed jobs.
func Summarize(totalGPUs int, recs []JobRecord) Summary {
	s := Summary{Jobs: len(recs)}
	var jcts []float64
	var queueSum float64
	started := 0
	first, last := model.Time(math.MaxInt64), model.Time(math.MinInt64)
	var gpuTime model.Time
	for i := range recs {
		r := &recs[i]
		first = min(first, r.Submit)
		s.Preemptions += r.Preemptions
		s.Migrations += r.Migrations
		s.Resizes += r.Resizes
		gpuTime += r.GPUTime
		switch {
		case r.Rejected:
			s.Rejected++
			s.RejectedReasons = count(s.RejectedReasons, r.Reason)
		case r.Unfinished():
			s.Unfinished++
			s.UnfinishedReasons = count(s.UnfinishedReasons, r.Reason)
		}
		if r.Start >= 0 {
			started++
			queueSum += (r.Start - r.Submit).Seconds()
		}
		if r.Completed() {
			jcts = append(jcts, r.JCT().Seconds())
			last = max(last, r.Finish)
		}
	}
	s.Completed = len(jcts)
	if started > 0 {
		s.AvgQueue = queueSum / float64(started)
	}
	if len(jcts) == 0 {
		return s
	}
	slices.Sort(jcts)
	var sum float64
	for _, j := range jcts {
		sum += j
	}
	s.AvgJCT = sum / float64(len(jcts))
	s.P50JCT = Percentile(jcts, 0.50)
	s.P99JCT = Percentile(jcts, 0.99)
	if last > first {
		s.Makespan = (last - first).Seconds()
		s.GPUUtil = gpuTime.Seconds() / (float64(totalGPUs) * s.Makespan)
	}
	return s
}

// count adds one to m[reason], making m when it is nil.
func count(m map[string]int, reason string) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[reason]++
	return m
}

// Percentile returns the nearest-rank p-quantile (0 < p <= 1) of sorted.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}
