package synth

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/core/profile"
)

// Options say what to draw.
type Options struct {
	// Jobs is the number of jobs, at least 1.
	Jobs int
	// Rate is the mean number of arrivals per hour (Poisson), positive.
	Rate float64
	// Seed makes the draw reproducible.
	Seed uint64
	// Data gives every job its family's dataset size and one of the upload
	// addresses "", "lab" and "campus" (equally likely).
	Data bool
	// Elastic is the share of jobs, in [0, 1], that may run on any GPU
	// count from half their drawn scale (rounded up) to twice it (at most
	// MaxElasticGPUs), in replicas of one GPU.
	Elastic float64
}

// MaxElasticGPUs caps an elastic job's maximum GPU count.
const MaxElasticGPUs = 16

// Job is one drawn job, with the fields of the native trace format.
type Job struct {
	ID      string
	SubmitS float64 // written rounded to whole seconds
	GPUs    int
	// MinGPUs and MaxGPUs differ from GPUs only for an elastic job.
	MinGPUs, MaxGPUs int
	Model            string
	Steps            int64
	// DatasetGB (nil without Options.Data) and Upload are seed 002's data
	// size and upload address.
	DatasetGB *float64
	Upload    string
}

// Elastic reports whether the job may change its GPU count.
func (j *Job) Elastic() bool { return j.MinGPUs != j.MaxGPUs }

// datasetGB is the size in GB of the data each Gavel family trains on
// (Gavel's workloads: ImageNet for ResNet-50, CIFAR-10 for ResNet-18,
// Multi30k for the Transformer, WikiText-2 for the LM, ML-20M for
// Recommendation, monet2photo for CycleGAN; A3C plays Pong and has none).
var datasetGB = map[string]float64{
	"ResNet-50": 150, "ResNet-18": 0.17, "Transformer": 0.01, "LM": 0.012,
	"Recommendation": 0.85, "CycleGAN": 0.3, "A3C": 0,
}

// Generate draws o.Jobs jobs from matrix m, which must have V100
// measurements.
func Generate(m *profile.Matrix, o Options) ([]Job, error) {
	switch {
	case o.Jobs < 1:
		return nil, fmt.Errorf("synth: %d jobs: want at least 1", o.Jobs)
	case !(o.Rate > 0) || math.IsInf(o.Rate, 1):
		return nil, fmt.Errorf("synth: arrival rate %g per hour: want a positive number", o.Rate)
	case !(o.Elastic >= 0 && o.Elastic <= 1):
		return nil, fmt.Errorf("synth: elastic share %g: want a number in [0, 1]", o.Elastic)
	case len(m.Models) == 0 || !m.HasType("v100"):
		return nil, errors.New("synth: the throughput matrix needs job types measured on v100")
	}
	rng := rand.New(rand.NewPCG(o.Seed, 2))
	uploads := []string{"", "lab", "campus"}
	jobs := make([]Job, 0, o.Jobs)
	t := 0.0
	for i := range o.Jobs {
		t += rng.ExpFloat64() * 3600 / o.Rate
		typ := m.Models[rng.IntN(len(m.Models))]
		scale := scaleFactor(rng)
		tput := v100Rate(m, typ, scale)
		if tput <= 0 {
			scale, tput = 1, v100Rate(m, typ, 1)
		}
		j := Job{ID: "g" + strconv.Itoa(i), SubmitS: t, GPUs: scale, MinGPUs: scale, MaxGPUs: scale,
			Model: typ, Steps: int64(math.Max(1, math.Round(duration(rng)*tput)))}
		if o.Data {
			family, _, _ := strings.Cut(typ, " (batch size")
			gb := datasetGB[family]
			j.DatasetGB, j.Upload = &gb, uploads[rng.IntN(len(uploads))]
		}
		if o.Elastic > 0 && rng.Float64() < o.Elastic {
			j.MinGPUs, j.MaxGPUs = (scale+1)/2, min(2*scale, MaxElasticGPUs)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// WriteJSONL writes jobs in the native trace format, one line each.
func WriteJSONL(w io.Writer, jobs []Job) error {
	for _, j := range jobs {
		line := fmt.Sprintf(`{"id":%q,"submit_s":%.0f,"gpus":%d,"model":%q,"steps":%d`, j.ID, j.SubmitS, j.GPUs, j.Model, j.Steps)
		if j.Elastic() {
			line += fmt.Sprintf(`,"min_gpus":%d,"max_gpus":%d,"replica_gpus":1`, j.MinGPUs, j.MaxGPUs)
		}
		if j.DatasetGB != nil {
			line += fmt.Sprintf(`,"dataset_gb":%g`, *j.DatasetGB)
		}
		if j.Upload != "" {
			line += fmt.Sprintf(`,"upload":%q`, j.Upload)
		}
		if _, err := io.WriteString(w, line+"}\n"); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	return nil
}

// scaleFactor draws Gavel's GPU count.
func scaleFactor(rng *rand.Rand) int {
	switch x := rng.Float64(); {
	case x <= 0.7:
		return 1
	case x <= 0.8:
		return 2
	case x <= 0.95:
		return 4
	}
	return 8
}

// duration draws Gavel's run time in seconds.
func duration(rng *rand.Rand) float64 {
	if rng.Float64() >= 0.8 {
		return 60 * math.Pow(10, 3+rng.Float64())
	}
	return 60 * math.Pow(10, 1.5+1.5*rng.Float64())
}

// v100Rate is the matrix's V100 steps/s of typ at exactly gpus GPUs, or 0.
func v100Rate(m *profile.Matrix, typ string, gpus int) float64 {
	for _, p := range m.Points(typ, "v100") {
		if p.GPUs == gpus {
			return p.Rate
		}
	}
	return 0
}
