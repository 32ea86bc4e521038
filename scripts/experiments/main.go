// Command experiments re-runs the policy comparisons of docs/EXPERIMENTS.md
// with bin/gpusched and prints them as Markdown tables. Traces under
// ../shared are skipped with a note when absent.
//
//	go run ./scripts/experiments [-bin bin/gpusched] [-shared ../shared] [-section S]
//	go run ./scripts/experiments -section gavel [-loads 1800,3600] [-seeds 1-6] [-flags "..."]
//	go run ./scripts/experiments -section alibaba
//	go run ./scripts/experiments -section robust [-set dev|held|fresh|sealed|vault|reserve|locker|cellar|attic|both|all] [-traces DIR]
//	go run ./scripts/experiments -section robust-scalers|robust-energy -set dev|held|fresh|sealed|vault|reserve|locker|cellar|attic [-flags "..."]
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
	AvgQueue    float64 `json:"avg_queue_s"`
	P99JCT      float64 `json:"p99_jct_s"`
	Makespan    float64 `json:"makespan_s"`
	GPUUtil     float64 `json:"gpu_util"`
	Preemptions int     `json:"preemptions"`
	Migrations  int     `json:"migrations"`
	Completed   int     `json:"completed"`
	Jobs        int     `json:"jobs"`
	Resizes     int     `json:"resizes"`
	EnergyKWh   float64 `json:"energy_kwh"`
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
	section := flag.String("section", "all", "which tables: seed003, elastic, energy, queues, robust (issue 28's grid: minutes), all (these five), gavel (issue 21's head-to-head with Gavel's simulator: tens of minutes the first time), alibaba (issue 26: the Alibaba 2023 trace with pack and fit), or robust-scalers / robust-energy (one part of the robust grid: the elastic workloads' scaler rows, or pack, spread and energy)")
	loads := flag.String("loads", "3600", "gavel: the heavy traces' mean seconds between arrivals, comma-separated")
	seeds := flag.String("seeds", "1-6", "gavel: the generator's seeds, comma-separated numbers and ranges")
	extra := flag.String("flags", "", "gavel, robust-scalers, robust-energy: flags added to every gpusched run, e.g. \"--gang-probe-light 0\"")
	keep := flag.String("traces", "", "robust: write the grid's traces into this folder and keep them")
	set := flag.String("set", "both", "robust: the generator seeds to run: dev (development), held (held-out), fresh (second held-out), sealed (third held-out, reported once), vault (fourth held-out, reported once), reserve (fifth held-out, reported once), locker (sixth held-out, reported once), cellar (seventh held-out, reported once), attic (eighth held-out, run once to report), both (dev and held) or all (dev, held and fresh)")
	flag.Parse()
	var err error
	switch *section {
	case "gavel":
		var h headToHead
		if h.loads, err = ints("-loads", *loads); err == nil {
			h.seeds, err = ints("-seeds", *seeds)
		}
		h.flags = strings.Fields(*extra)
		if err == nil {
			err = gavelHeadToHead(*bin, *shared, h)
		}
	case "seed003":
		err = seed003(*bin, *shared)
	case "elastic":
		err = elastic(*bin, *shared)
	case "energy":
		err = energy(*bin, *shared)
	case "queues":
		err = queues(*bin, *shared)
	case "alibaba":
		err = alibaba(*bin, *shared)
	case "robust":
		err = robust(*bin, *set, *keep)
	case "robust-scalers", "robust-energy":
		err = robustPart(*bin, strings.TrimPrefix(*section, "robust-"), *set, *keep, strings.Fields(*extra))
	case "all":
		if err = seed003(*bin, *shared); err == nil {
			err = elastic(*bin, *shared)
		}
		if err == nil {
			err = energy(*bin, *shared)
		}
		if err == nil {
			err = queues(*bin, *shared)
		}
		if err == nil {
			err = robust(*bin, *set, *keep)
		}
	default:
		err = fmt.Errorf("-section %q: want seed003, elastic, energy, queues, all, gavel, alibaba or robust", *section)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "experiments:", err)
		os.Exit(1)
	}
}

// seed003 prints the policy × placer tables of issue 3.
func seed003(bin, shared string) error {
	gavel := "testdata/traces/gavel/"
	fmt.Println("## Seed 003: queue policies × placers")
	fmt.Println()
	var ws []workload
	for _, tr := range []string{"small_test", "medium_test", "artifact_evaluation"} {
		for _, c := range []string{"v100=2,p100=2,k80=2", "v100=8,p100=8,k80=8"} {
			ws = append(ws, workload{tr + " on " + c, []string{"--trace", gavel + tr + ".trace", "--gpus", c, "--sleep=false"}})
		}
	}
	ws = append(ws, workload{"Tiresias 60_job on v100=8,p100=8,k80=8", []string{"--trace", "testdata/traces/tiresias/60_job.csv", "--gpus", "v100=8,p100=8,k80=8", "--sleep=false"}})
	ws = append(ws, workload{"first 5,000 Philly jobs on v100=128,p100=128,k80=128 (8/node)",
		[]string{"--trace", shared + "/traces/philly/philly.csv", "--limit", "5000", "--gpus", "v100=128,p100=128,k80=128", "--gpus-per-node", "8", "--sleep=false"}})
	for _, w := range ws {
		if err := table(bin, w); err != nil {
			return err
		}
	}
	return nil
}

// run runs one simulation and decodes its summary.
func run(bin string, args []string) (summary, error) {
	var s summary
	out, err := runOut(bin, args)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return s, fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return s, nil
}

// runOut runs `bin sim --json args` and returns its output.
func runOut(bin string, args []string) ([]byte, error) {
	args = append([]string{"sim", "--json"}, args...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
	}
	return out, nil
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
			s, err := run(bin, append(append(append([]string{}, w.args...), p...), "--placer", pl))
			if err != nil {
				return err
			}
			fmt.Printf("| %s | %s | %.1f | %.1f | %.0f | %.3f | %d (%d) |\n", p[1], pl, s.AvgJCT, s.P99JCT, s.Makespan, s.GPUUtil, s.Preemptions, s.Migrations)
		}
	}
	fmt.Println()
	return nil
}

// scalerRows are the elastic configurations compared on each workload.
var scalerRows = []struct{ name, args string }{
	{"none (rigid)", "--scaler none"},
	{"threshold, seed's elasticConfig", "--scaler threshold --elastic-min 0.5 --elastic-proportion 0.3 --expand-threshold 0.3 --scaling-threshold 0.9"},
	{"threshold, p=1 et=0.8 st=1", "--scaler threshold --elastic-min 0.5 --elastic-proportion 1 --expand-threshold 0.8 --scaling-threshold 1"},
	{"fulfillment", "--scaler fulfillment --elastic-min 0.5"},
	{"threshold, seed's elasticConfig, as written", "--scaler threshold --elastic-min 0.5 --config testdata/config/seed000.yaml"},
	{"threshold, p=1 et=0.8 st=1, as written", "--scaler threshold --elastic-min 0.5 --elastic-proportion 1 --expand-threshold 0.8 --scaling-threshold 1 --reclaim=false"},
	{"fulfillment, as written", "--scaler fulfillment --elastic-min 0.5 --reclaim=false"},
}

// elastic prints the scaler tables of issue 4: the eight Pollux workloads
// on 16 nodes × 4 GPUs, and a Philly slice.
func elastic(bin, shared string) error {
	fmt.Println("## Seeds 000 and 001: elastic scalers")
	fmt.Println()
	dir := shared + "/traces/pollux/workloads/"
	if _, err := os.Stat(dir); err != nil {
		fmt.Printf("skipped: %s not found\n\n", dir)
		return nil
	}
	base := "--gpus v100=64 --gpus-per-node 4 --sleep=false --policy tiresias"
	fmt.Printf("### Pollux workloads 1–8 on v100=64 (16 nodes × 4)\n\n`gpusched sim --trace %sworkload-N.csv %s ARGS --json`; "+
		"each cell is the mean over the eight workloads.\n\n", dir, base)
	fmt.Println("| scaler | ARGS | avg JCT (s) | p99 JCT (s) | makespan (s) | util | resizes |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
	for _, row := range scalerRows {
		var sum summary
		for i := 1; i <= 8; i++ {
			s, err := run(bin, strings.Fields(fmt.Sprintf("--trace %sworkload-%d.csv %s %s", dir, i, base, row.args)))
			if err != nil {
				return err
			}
			sum.AvgJCT += s.AvgJCT / 8
			sum.P99JCT += s.P99JCT / 8
			sum.Makespan += s.Makespan / 8
			sum.GPUUtil += s.GPUUtil / 8
			sum.Resizes += s.Resizes
		}
		fmt.Printf("| %s | `%s` | %.1f | %.1f | %.0f | %.3f | %d |\n", row.name, row.args, sum.AvgJCT, sum.P99JCT, sum.Makespan, sum.GPUUtil, sum.Resizes)
	}
	fmt.Println()
	philly := shared + "/traces/philly/philly.csv"
	base = "--trace " + philly + " --limit 5000 --gpus v100=128,p100=128,k80=128 --gpus-per-node 8 --sleep=false --policy las --placer hetero"
	fmt.Printf("### first 5,000 Philly jobs, elastic, on v100=128,p100=128,k80=128 (8/node)\n\n`gpusched sim %s ARGS --json`\n\n", base)
	fmt.Println("| scaler | ARGS | avg JCT (s) | p99 JCT (s) | makespan (s) | util | resizes |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
	for _, row := range scalerRows {
		s, err := run(bin, strings.Fields(base+" "+row.args))
		if err != nil {
			return err
		}
		fmt.Printf("| %s | `%s` | %.1f | %.1f | %.0f | %.3f | %d |\n", row.name, row.args, s.AvgJCT, s.P99JCT, s.Makespan, s.GPUUtil, s.Resizes)
	}
	fmt.Println()
	return nil
}
