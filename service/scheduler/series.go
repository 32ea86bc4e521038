package scheduler

import (
	"slices"
	"time"

	"github.com/gpusched/gpusched/service/api"
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

// seriesOf returns job id's series, made on first use. Called with s.mu
// held.
func (s *Scheduler) seriesOf(id string) *jobSeries {
	ser := s.eta.series[id]
	if ser == nil {
		ser = &jobSeries{}
		s.eta.series[id] = ser
	}
	return ser
}

// noteProgress adds a progress report of job j (whose record before the
// report is cur) to its series. Called with s.mu held.
func (s *Scheduler) noteProgress(cur *record, rep progressReport) {
	if cur.State != api.Running {
		return
	}
	ser := s.seriesOf(cur.ID)
	p := api.ProgressPoint{At: rep.at.UTC(), Steps: rep.steps, Attempt: cur.Attempt}
	same := ser.count > 0 && ser.exec.Attempt == p.Attempt && ser.gen == cur.Generation
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
		ser.exec, ser.gen, ser.count = p, cur.Generation, 0
	}
	ser.count++
	ser.progress = pushPoint(ser.progress, p)
}

// notePower adds the mean power attributed to job id over the d before at.
// Called with s.mu held.
func (s *Scheduler) notePower(id string, joules float64, d time.Duration, at time.Time) {
	if d <= 0 {
		return
	}
	ser := s.seriesOf(id)
	p := api.PowerPoint{At: at.UTC(), Watts: joules / d.Seconds()}
	if n := len(ser.power); n > 0 && ser.power[n-1].At.Equal(p.At) {
		ser.power[n-1].Watts += p.Watts // another node of the same job
		return
	}
	ser.power = pushPoint(ser.power, p)
}

// measuredRate returns running job rec's steps/s in its current execution
// (attempt and generation): from its first progress report to its latest,
// when they are at least a second apart and the steps grew, and the number
// of reports; 0, 0 otherwise. Called with s.mu held.
func (s *Scheduler) measuredRate(rec *record) (float64, int) {
	ser := s.eta.series[rec.ID]
	if ser == nil || ser.count < 2 || ser.exec.Attempt != rec.Attempt || ser.gen != rec.Generation {
		return 0, 0
	}
	last := ser.progress[len(ser.progress)-1]
	d := last.At.Sub(ser.exec.At).Seconds()
	if d < 1 || last.Steps <= ser.exec.Steps {
		return 0, 0
	}
	return float64(last.Steps-ser.exec.Steps) / d, ser.count
}

// endSeries marks a job's series ended and drops the oldest ended series
// beyond maxEndedSeries. Called with s.mu held.
func (s *Scheduler) endSeries(id string, now time.Time) {
	if ser := s.eta.series[id]; ser != nil {
		ser.ended = now
	}
	var ended []string
	for id, ser := range s.eta.series {
		if !ser.ended.IsZero() {
			ended = append(ended, id)
		}
	}
	if len(ended) <= maxEndedSeries {
		return
	}
	slices.SortFunc(ended, func(a, b string) int { return s.eta.series[a].ended.Compare(s.eta.series[b].ended) })
	for _, id := range ended[:len(ended)-maxEndedSeries] {
		delete(s.eta.series, id)
	}
}

// Series returns what the dashboard draws for job id: its current
// replicas, progress and power over time. ErrNotFound.
func (s *Scheduler) Series(id string) (api.JobSeries, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return api.JobSeries{}, noJob(id)
	}
	out := api.JobSeries{Job: id, Replicas: []api.ReplicaInfo{}, Progress: []api.ProgressPoint{}, Power: []api.PowerPoint{}}
	for _, rr := range j.rec.Replicas {
		ri := api.ReplicaInfo{ID: rr.ID, Node: rr.Node, GPUs: slices.Clone(rr.GPUs), State: "running"}
		switch {
		case rr.Lost:
			ri.State = "lost"
		case rr.Left && !rr.Done:
			ri.State = "left"
		case rr.Done:
			ri.State, ri.ExitCode = "exited", ptr(rr.ExitCode)
		}
		out.Replicas = append(out.Replicas, ri)
	}
	if ser := s.eta.series[id]; ser != nil {
		out.Progress = append(out.Progress, ser.progress...)
		out.Power = append(out.Power, ser.power...)
	}
	return out, nil
}

// pushPoint appends p, keeping the latest maxSeriesPoints.
func pushPoint[T any](list []T, p T) []T {
	list = append(list, p)
	if len(list) > maxSeriesPoints {
		list = slices.Delete(list, 0, len(list)-maxSeriesPoints)
	}
	return list
}
