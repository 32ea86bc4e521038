// Command gavelstyle writes a Gavel-style synthetic trace in gpusched's
// jsonl format (package synth has the rules), for the energy and elastic
// experiments (docs/EXPERIMENTS.md) and the simulator's regression tests.
//
//	go run ./scripts/gavelstyle [-n 400] [-rate 8] [-seed 1] [-data=true] [-elastic 0] > trace.jsonl
//
// -data gives each job a dataset size and an upload address (seed 002);
// -elastic F makes a share F of the jobs elastic (half to twice their
// drawn GPU count). The same flags give the same file.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/internal/assets"
	"github.com/gpusched/gpusched/sim/synth"
)

func main() {
	var o synth.Options
	flag.IntVar(&o.Jobs, "n", 400, "number of jobs")
	flag.Float64Var(&o.Rate, "rate", 8, "arrivals per hour (Poisson)")
	flag.Uint64Var(&o.Seed, "seed", 1, "random seed")
	flag.BoolVar(&o.Data, "data", true, "give each job a dataset size and an upload address (seed 002)")
	flag.Float64Var(&o.Elastic, "elastic", 0, "share of jobs that are elastic (min = half, max = twice the drawn GPUs)")
	flag.Parse()
	if err := write(o); err != nil {
		fmt.Fprintln(os.Stderr, "gavelstyle:", err)
		os.Exit(1)
	}
}

func write(o synth.Options) error {
	m, err := profile.ParseMatrix("embedded throughput matrix", assets.Throughputs())
	if err != nil {
		return err
	}
	jobs, err := synth.Generate(m, o)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	if err := synth.WriteJSONL(w, jobs); err != nil {
		return err
	}
	return w.Flush()
}
