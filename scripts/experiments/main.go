// Command experiments re-runs the policy comparisons of docs/EXPERIMENTS.md
// with bin/gpusched and prints them as Markdown tables. Traces under
// ../shared are skipped with a note when absent.
//
//	go run ./scripts/experiments [-bin bin/gpusched] [-shared ../shared]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

type summary struct {
	AvgJCT      float64 `json:"avg_jct_s"`
	P99JCT      float64 `json:"p99_jct_s"`
	Makespan    float64 `json:"makespan_s"`
	GPUUtil     float64 `json:"gpu_util"`
	Preemptions int     `json:"preemptions"`
	Migrations  int     `json:"migrations"`
	Completed   int     `json:"completed"`
	Jobs        int     `json:"jobs"`
}

type workload struct {
	title string
	args  []string
}

var policies = [][]string{
	{"--policy", "fifo"}, {"--policy", "srtf"}, {"--policy", "tiresias"}, {"--policy", "las"}, {"--policy", "hlas"},
}

func main() {
	bin := flag.String("bin", "bin/gpusched", "gpusched binary")
	shared := flag.String("shared", "../shared", "the shared folder with the full traces")
	flag.Parse()
	gavel := "testdata/traces/gavel/"
	var ws []workload
	for _, tr := range []string{"small_test", "medium_test", "artifact_evaluation"} {
		for _, c := range []string{"v100=2,p100=2,k80=2", "v100=8,p100=8,k80=8"} {
			ws = append(ws, workload{tr + " on " + c, []string{"--trace", gavel + tr + ".trace", "--gpus", c}})
		}
	}
	ws = append(ws, workload{"Tiresias 60_job on v100=8,p100=8,k80=8", []string{"--trace", "testdata/traces/tiresias/60_job.csv", "--gpus", "v100=8,p100=8,k80=8"}})
	ws = append(ws, workload{"first 5,000 Philly jobs on v100=128,p100=128,k80=128 (8/node)",
		[]string{"--trace", *shared + "/traces/philly/philly.csv", "--limit", "5000", "--gpus", "v100=128,p100=128,k80=128", "--gpus-per-node", "8"}})
	for _, w := range ws {
		if err := table(*bin, w); err != nil {
			fmt.Fprintln(os.Stderr, "experiments:", err)
			os.Exit(1)
		}
	}
}

func table(bin string, w workload) error {
	if _, err := os.Stat(w.args[1]); err != nil {
		fmt.Printf("### %s\n\nskipped: %s not found\n\n", w.title, w.args[1])
		return nil
	}
	fmt.Printf("### %s\n\n`gpusched sim %s --policy P --placer L --json`\n\n", w.title, strings.Join(w.args, " "))
	fmt.Println("| policy | placer | avg JCT (s) | p99 JCT (s) | makespan (s) | util | preemptions (migrations) |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
	for _, p := range policies {
		for _, pl := range []string{"pack", "hetero"} {
			args := append(append(append([]string{"sim", "--json"}, w.args...), p...), "--placer", pl)
			out, err := exec.Command(bin, args...).Output()
			if err != nil {
				return fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
			}
			var s summary
			if err := json.Unmarshal(out, &s); err != nil {
				return fmt.Errorf("%s: %w", strings.Join(args, " "), err)
			}
			fmt.Printf("| %s | %s | %.1f | %.1f | %.0f | %.3f | %d (%d) |\n", p[1], pl, s.AvgJCT, s.P99JCT, s.Makespan, s.GPUUtil, s.Preemptions, s.Migrations)
		}
	}
	fmt.Println()
	return nil
}
