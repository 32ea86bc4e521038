package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
)

// jsonJob is one line of the native trace format. Pointers tell a missing
// field from a zero one.
type jsonJob struct {
	ID         *string
	Submit     *float64
	GPUs       *int
	MinGPUs    *int
	MaxGPUs    *int
	Model      string
	Steps      *int64
	Duration   *float64
	GPUType    string
	User       string
	Queue      string
	Priority   int
	PeakMemMiB int
	// ReplicaGPUs is nil when absent.
	ReplicaGPUs *int
	// ReplicaCPUMilli and ReplicaMemMiB are one replica's CPU and memory.
	ReplicaCPUMilli, ReplicaMemMiB *int
	// CPUs (cores or a quantity), Memory (a quantity, or bytes) and
	// Resources (any resource by name) are one replica's requests too.
	CPUs, Memory *config.Amount
	Resources    map[string]config.Amount
	// Scaling holds [GPU count, rate] pairs; pointers tell a JSON null
	// from a zero.
	Scaling [][]*float64
	// DatasetGB is the size of the job's data in GB (10^9 bytes); Upload
	// its upload address (seed 002).
	DatasetGB *float64
	Upload    string
}

// field returns a pointer to the field that JSON key names, or nil for an
// unknown key. Keys are matched exactly (encoding/json alone would also
// accept "GPUs" for "gpus").
func (j *jsonJob) field(key string) any {
	switch key {
	case "id":
		return &j.ID
	case "submit_s":
		return &j.Submit
	case "gpus":
		return &j.GPUs
	case "min_gpus":
		return &j.MinGPUs
	case "max_gpus":
		return &j.MaxGPUs
	case "model":
		return &j.Model
	case "steps":
		return &j.Steps
	case "duration_s":
		return &j.Duration
	case "gpu_type":
		return &j.GPUType
	case "user":
		return &j.User
	case "queue":
		return &j.Queue
	case "priority":
		return &j.Priority
	case "peak_mem_mib":
		return &j.PeakMemMiB
	case "replica_gpus":
		return &j.ReplicaGPUs
	case "replica_cpu_milli":
		return &j.ReplicaCPUMilli
	case "replica_mem_mib":
		return &j.ReplicaMemMiB
	case "cpus":
		return &j.CPUs
	case "memory":
		return &j.Memory
	case "resources":
		return &j.Resources
	case "scaling":
		return &j.Scaling
	case "dataset_gb":
		return &j.DatasetGB
	case "upload":
		return &j.Upload
	}
	return nil
}

// readJSONL reads the native format: one JSON object per line.
func readJSONL(r io.Reader, name string) ([]model.JobSpec, error) {
	l := newLines(r, name)
	var (
		jobs  []model.JobSpec
		lines []int
	)
	for l.next() {
		j, err := decodeJSONJob(l.text)
		if err != nil {
			return nil, l.fail("%v", err)
		}
		spec, err := j.spec()
		if err != nil {
			return nil, l.fail("%v", err)
		}
		jobs = append(jobs, spec)
		lines = append(lines, l.n)
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	return finish(name, jobs, lines)
}

// decodeJSONJob decodes one line holding exactly one JSON object whose keys
// are all known and appear once.
func decodeJSONJob(line []byte) (jsonJob, error) {
	var j jsonJob
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return j, errors.New("not a JSON object")
	}
	var seen []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return j, badJSON(err)
		}
		key, _ := tok.(string)
		ptr := j.field(key)
		switch {
		case ptr == nil:
			return j, fmt.Errorf("unknown field %q", key)
		case slices.Contains(seen, key):
			return j, fmt.Errorf("field %q given twice", key)
		}
		seen = append(seen, key)
		if err := dec.Decode(ptr); err != nil {
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) {
				return j, fmt.Errorf("field %q: got JSON %s, want %s", key, typeErr.Value, wantType(key, typeErr))
			}
			return j, fmt.Errorf("field %q: %w", key, badJSON(err))
		}
	}
	if _, err := dec.Token(); err != nil {
		return j, badJSON(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return j, errors.New("more than one JSON value on the line")
	}
	return j, nil
}

// wantType names the JSON a field wants in a type error.
func wantType(key string, err *json.UnmarshalTypeError) string {
	switch key {
	case "scaling":
		return "[[GPU count, rate], ...]"
	case "cpus", "memory":
		return "a number or a quantity string"
	case "resources":
		return `{"name": amount, ...}`
	}
	return err.Type.String()
}

// badJSON describes a decoding error; running out of input means the object
// does not end on its line.
func badJSON(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("bad JSON: the object does not end on this line (one job per line)")
	}
	return fmt.Errorf("bad JSON: %w", err)
}

// spec checks the decoded job and converts it.
func (j *jsonJob) spec() (model.JobSpec, error) {
	var s model.JobSpec
	switch {
	case j.ID == nil:
		return s, errors.New("missing id")
	case strings.TrimSpace(*j.ID) == "":
		return s, errors.New("id is empty")
	case j.Submit == nil:
		return s, errors.New("missing submit_s")
	case j.GPUs == nil:
		return s, errors.New("missing gpus")
	}
	s.ID, s.Model, s.GPUType, s.User, s.Priority = *j.ID, j.Model, j.GPUType, j.User, j.Priority
	s.Queue = j.Queue
	if msg := checkRange("submit_s", *j.Submit, 0, maxSeconds); msg != "" {
		return s, errors.New(msg)
	}
	s.Submit = model.FromSeconds(*j.Submit)
	if msg := checkRange("peak_mem_mib", float64(j.PeakMemMiB), 0, math.MaxInt32); msg != "" {
		return s, errors.New(msg)
	}
	s.PeakMemMiB = j.PeakMemMiB
	if err := j.requests(&s); err != nil {
		return s, err
	}
	if err := j.data(&s); err != nil {
		return s, err
	}
	if err := j.gpuCounts(&s); err != nil {
		return s, err
	}
	if err := j.replicaGPUs(&s); err != nil {
		return s, err
	}
	if err := j.work(&s); err != nil {
		return s, err
	}
	if j.Scaling == nil {
		return s, nil
	}
	if s.Steps > 0 {
		return s, errors.New(`field "scaling": only for jobs given by duration_s (a job given in steps scales by the throughput matrix)`)
	}
	var err error
	if s.Scaling, err = scalingCurve(j.Scaling, s.GPUs); err != nil {
		return s, fmt.Errorf("field \"scaling\": %w", err)
	}
	return s, nil
}

// maxDatasetGB bounds dataset_gb (an exabyte), so that its size in
// megabytes fits an int64 with room to spare.
const maxDatasetGB = 1e9

// data checks dataset_gb (a finite size ≥ 0, kept in whole megabytes) and
// sets it and the upload address on s.
func (j *jsonJob) data(s *model.JobSpec) error {
	s.Upload = j.Upload
	if j.DatasetGB == nil {
		return nil
	}
	if msg := checkRange("dataset_gb", *j.DatasetGB, 0, maxDatasetGB); msg != "" {
		return errors.New(msg)
	}
	s.DatasetMB = int64(math.Round(*j.DatasetGB * 1000))
	return nil
}

// replicaGPUs checks that replica_gpus, when given, is positive and divides
// gpus, min_gpus and max_gpus, and sets it on s.
func (j *jsonJob) replicaGPUs(s *model.JobSpec) error {
	if j.ReplicaGPUs == nil {
		return nil
	}
	r := *j.ReplicaGPUs
	if msg := checkRange("replica_gpus", float64(r), 1, maxGPUs); msg != "" {
		return errors.New(msg)
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"gpus", s.GPUs}, {"min_gpus", s.MinGPUs}, {"max_gpus", s.MaxGPUs}} {
		if c.n%r != 0 {
			return fmt.Errorf("%s %d is not a multiple of replica_gpus %d", c.name, c.n, r)
		}
	}
	s.ReplicaGPUs = r
	return nil
}

// gpuCounts checks 1 <= min_gpus <= gpus <= max_gpus (both bounds default to
// gpus) and sets them on s.
func (j *jsonJob) gpuCounts(s *model.JobSpec) error {
	s.GPUs = *j.GPUs
	s.MinGPUs, s.MaxGPUs = s.GPUs, s.GPUs
	if j.MinGPUs != nil {
		s.MinGPUs = *j.MinGPUs
	}
	if j.MaxGPUs != nil {
		s.MaxGPUs = *j.MaxGPUs
	}
	if msg := checkRange("gpus", float64(s.GPUs), 1, maxGPUs); msg != "" {
		return errors.New(msg)
	}
	if msg := checkRange("min_gpus", float64(s.MinGPUs), 1, float64(s.GPUs)); msg != "" {
		return fmt.Errorf("%s (gpus is %d)", msg, s.GPUs)
	}
	if msg := checkRange("max_gpus", float64(s.MaxGPUs), float64(s.GPUs), maxGPUs); msg != "" {
		return fmt.Errorf("%s (gpus is %d)", msg, s.GPUs)
	}
	return nil
}

// work checks that the job gives exactly one of model+steps or duration_s
// (model may come with duration_s as the job type for speed ratios) and
// sets Steps or Duration on s.
func (j *jsonJob) work(s *model.JobSpec) error {
	switch {
	case j.Steps != nil && j.Model == "":
		return errors.New("steps without model")
	case j.Steps != nil && j.Duration != nil:
		return errors.New("both steps and duration_s: give one")
	case j.Steps != nil:
		if msg := checkRange("steps", float64(*j.Steps), 1, math.MaxInt64); msg != "" {
			return errors.New(msg)
		}
		s.Steps = *j.Steps
	case j.Duration != nil:
		if msg := checkRange("duration_s", *j.Duration, 0, maxSeconds); msg != "" {
			return errors.New(msg)
		}
		s.Duration = atLeastOneMilli(model.FromSeconds(*j.Duration))
	default:
		return errors.New("no work: give model and steps, or duration_s")
	}
	return nil
}

// scalingCurve checks the [GPU count, rate] pairs of field "scaling" —
// GPU counts whole, positive and strictly increasing, rates non-negative,
// some rate positive, and the curve not 0 at or around the job's own count
// gpus, where its duration was measured — and converts them.
func scalingCurve(pairs [][]*float64, gpus int) ([]model.ScalePoint, error) {
	if len(pairs) == 0 {
		return nil, errors.New("no points (want [[GPU count, rate], ...])")
	}
	pts := make([]model.ScalePoint, len(pairs))
	positive := false
	for i, p := range pairs {
		if len(p) != 2 || p[0] == nil || p[1] == nil {
			return nil, fmt.Errorf("point %d is not a [GPU count, rate] pair of numbers", i+1)
		}
		n, rate := *p[0], *p[1]
		if msg := checkRange("GPU count", n, 1, maxGPUs); msg != "" {
			return nil, fmt.Errorf("point %d: %s", i+1, msg)
		}
		if n != math.Trunc(n) {
			return nil, fmt.Errorf("point %d: GPU count %s is not an integer", i+1, fmtNum(n))
		}
		if i > 0 && int(n) <= pts[i-1].GPUs {
			return nil, fmt.Errorf("point %d: GPU count %d does not exceed the previous %d (GPU counts must increase)",
				i+1, int(n), pts[i-1].GPUs)
		}
		if msg := checkRange("rate", rate, 0, math.MaxFloat64); msg != "" {
			return nil, fmt.Errorf("point %d: %s", i+1, msg)
		}
		pts[i] = model.ScalePoint{GPUs: int(n), Rate: rate}
		positive = positive || rate > 0
	}
	if !positive {
		return nil, errors.New("every rate is 0")
	}
	if zeroAround(pts, gpus) {
		return nil, fmt.Errorf("rate 0 at or around gpus %d, where the job's duration is measured", gpus)
	}
	return pts, nil
}

// zeroAround reports whether a curve gives rate 0 at n: a zero point at n,
// or a zero on either side of it (the simulator's interpolation gives 0
// there, see profile.ScaleRate).
func zeroAround(pts []model.ScalePoint, n int) bool {
	i, found := slices.BinarySearchFunc(pts, n, func(p model.ScalePoint, n int) int { return p.GPUs - n })
	switch {
	case found:
		return pts[i].Rate == 0
	case i == 0:
		return pts[0].Rate == 0
	case i == len(pts):
		return pts[i-1].Rate == 0
	}
	return pts[i-1].Rate == 0 || pts[i].Rate == 0
}
