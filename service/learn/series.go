package learn

import (
	"slices"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// Series bounds: the points kept per job and kind, and the ended jobs
// whose series are kept (the oldest ended are dropped first).
const (
	maxSeriesPoints = 360
	maxEndedSeries  = 200
)

// jobSeries is one job's progress and power over time (memory only).
type jobSeries struct {
	progress []api.ProgressPoint
	power    []api.PowerPoint
	// exec is the first progress point of the current execution (one
	// attempt and membership generation: a rate is measured only within
	// one), gen its generation and count its points so far.
	exec  api.ProgressPoint
	gen   int
	count int
	// ended is when the job reached a final state (zero while active).
	ended time.Time
}

// Series holds the jobs' progress and power over time (memory only), for
// the dashboard and the measured speeds of forecasts.
type Series struct{ m map[string]*jobSeries }

// of returns job id's series, made on first use.
func (ss *Series) of(id string) *jobSeries {
	ser := ss.m[id]
	if ser == nil {
		ser = &jobSeries{}
		ss.m[id] = ser
	}
	return ser
}

// Progress adds a progress report (steps at at) of running job id in its
// attempt and membership generation.
func (ss *Series) Progress(id string, attempt, generation int, steps int64, at time.Time) {
	ser := ss.of(id)
	p := api.ProgressPoint{At: at.UTC(), Steps: steps, Attempt: attempt}
	same := ser.count > 0 && ser.exec.Attempt == p.Attempt && ser.gen == generation
	if n := len(ser.progress); n > 0 {
		last := ser.progress[n-1]
		if !p.At.After(last.At) {
			return
		}
		if same && p.Steps >= last.Steps {
			p.StepsPerS = float64(p.Steps-last.Steps) / p.At.Sub(last.At).Seconds()
		}
	}
	if !same || p.Steps < ser.exec.Steps {
		ser.exec, ser.gen, ser.count = p, generation, 0
	}
	ser.count++
	ser.progress = pushPoint(ser.progress, p)
}

// Power adds the mean power attributed to job id over the d before at.
func (ss *Series) Power(id string, joules float64, d time.Duration, at time.Time) {
	if d <= 0 {
		return
	}
	ser := ss.of(id)
	p := api.PowerPoint{At: at.UTC(), Watts: joules / d.Seconds()}
	if n := len(ser.power); n > 0 && ser.power[n-1].At.Equal(p.At) {
		ser.power[n-1].Watts += p.Watts // another node of the same job
		return
	}
	ser.power = pushPoint(ser.power, p)
}

// MeasuredRate returns running job id's steps/s in its current execution
// (attempt and generation): from its first progress report to its latest,
// when they are at least a second apart and the steps grew, and the number
// of reports; 0, 0 otherwise.
func (ss *Series) MeasuredRate(id string, attempt, generation int) (float64, int) {
	ser := ss.m[id]
	if ser == nil || ser.count < 2 || ser.exec.Attempt != attempt || ser.gen != generation {
		return 0, 0
	}
	last := ser.progress[len(ser.progress)-1]
	d := last.At.Sub(ser.exec.At).Seconds()
	if d < 1 || last.Steps <= ser.exec.Steps {
		return 0, 0
	}
	return float64(last.Steps-ser.exec.Steps) / d, ser.count
}

// end marks a job's series ended and drops the oldest ended series beyond
// maxEndedSeries.
func (ss *Series) end(id string, now time.Time) {
	if ser := ss.m[id]; ser != nil {
		ser.ended = now
	}
	var ended []string
	for id, ser := range ss.m {
		if !ser.ended.IsZero() {
			ended = append(ended, id)
		}
	}
	if len(ended) <= maxEndedSeries {
		return
	}
	slices.SortFunc(ended, func(a, b string) int { return ss.m[a].ended.Compare(ss.m[b].ended) })
	for _, id := range ended[:len(ended)-maxEndedSeries] {
		delete(ss.m, id)
	}
}

// Points returns job id's progress and power points (nil: none).
func (ss *Series) Points(id string) ([]api.ProgressPoint, []api.PowerPoint) {
	if ser := ss.m[id]; ser != nil {
		return ser.progress, ser.power
	}
	return nil, nil
}

// pushPoint appends p, keeping the latest maxSeriesPoints.
func pushPoint[T any](list []T, p T) []T {
	list = append(list, p)
	if len(list) > maxSeriesPoints {
		list = slices.Delete(list, 0, len(list)-maxSeriesPoints)
	}
	return list
}

// View returns what the dashboard draws for job id, whose replicas are
// replicas: its current replicas, progress and power over time.
func (ss *Series) View(id string, replicas []ledger.Replica) api.JobSeries {
	out := api.JobSeries{Job: id, Replicas: []api.ReplicaInfo{}, Progress: []api.ProgressPoint{}, Power: []api.PowerPoint{}}
	for _, rr := range replicas {
		ri := api.ReplicaInfo{ID: rr.ID, Node: rr.Node, GPUs: slices.Clone(rr.GPUs), State: "running"}
		switch {
		case rr.Lost:
			ri.State = "lost"
		case rr.Left && !rr.Done:
			ri.State = "left"
		case rr.Done:
			code := rr.ExitCode
			ri.State, ri.ExitCode = "exited", &code
		}
		out.Replicas = append(out.Replicas, ri)
	}
	progress, power := ss.Points(id)
	out.Progress = append(out.Progress, progress...)
	out.Power = append(out.Power, power...)
	return out
}
