// Command gavelstyle writes a Gavel-style synthetic trace in gpusched's
// jsonl format, with a dataset size and an upload address per job, for
// seed 002's energy experiments (docs/EXPERIMENTS.md).
//
//	go run ./scripts/gavelstyle [-n 400] [-rate 8] [-seed 1] > trace.jsonl
//
// Jobs follow Gavel's generator (scheduler/utils.py, generate_job): a job
// type drawn uniformly from the throughput matrix's job types; a scale
// factor of 1 (70 %), 2 (10 %), 4 (15 %) or 8 (5 %) GPUs; a run time on one
// V100 at that scale of 60·10^u seconds, u uniform in [1.5, 3] (80 %) or
// [3, 4] (20 %), turned into steps by the matrix's V100 throughput; Poisson
// arrivals at -rate jobs per hour. A type without a V100 measurement at the
// drawn scale is drawn again at scale 1. Each job's dataset is its family's
// (table datasetGB: the public size of the dataset the Gavel workload
// trains on) and its upload address one of "", "lab" and "campus" (equally
// likely). The same flags give the same file.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/gpusched/gpusched/assets"
	"github.com/gpusched/gpusched/profile"
)

// datasetGB is the size in GB of the data each Gavel family trains on
// (Gavel's workloads: ImageNet for ResNet-50, CIFAR-10 for ResNet-18,
// Multi30k for the Transformer, WikiText-2 for the LM, ML-20M for
// Recommendation, monet2photo for CycleGAN; A3C plays Pong and has none).
var datasetGB = map[string]float64{
	"ResNet-50": 150, "ResNet-18": 0.17, "Transformer": 0.01, "LM": 0.012,
	"Recommendation": 0.85, "CycleGAN": 0.3, "A3C": 0,
}

func main() {
	n := flag.Int("n", 400, "number of jobs")
	rate := flag.Float64("rate", 8, "arrivals per hour (Poisson)")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := write(*n, *rate, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gavelstyle:", err)
		os.Exit(1)
	}
}

func write(n int, rate float64, seed uint64) error {
	m, err := profile.ParseMatrix("embedded throughput matrix", assets.Throughputs())
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	uploads := []string{"", "lab", "campus"}
	t := 0.0
	for i := range n {
		t += rng.ExpFloat64() * 3600 / rate
		typ := m.Models[rng.IntN(len(m.Models))]
		scale := scaleFactor(rng)
		tput := v100Rate(m, typ, scale)
		if tput <= 0 {
			scale, tput = 1, v100Rate(m, typ, 1)
		}
		steps := int64(math.Max(1, math.Round(duration(rng)*tput)))
		family, _, _ := strings.Cut(typ, " (batch size")
		up := uploads[rng.IntN(len(uploads))]
		line := fmt.Sprintf(`{"id":"g%d","submit_s":%.0f,"gpus":%d,"model":%q,"steps":%d,"dataset_gb":%g`, i, t, scale, typ, steps, datasetGB[family])
		if up != "" {
			line += fmt.Sprintf(`,"upload":%q`, up)
		}
		fmt.Println(line + "}")
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
