package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// energyPlacers are the placers the energy tables compare.
var energyPlacers = []string{"pack", "spread", "energy"}

// energy prints seed 002's tables: issue 13's, the documented defaults on
// 300-job Gavel-style traces (idle nodes sleep, no contention on a --gpus
// cluster), and issue 5's, with contention, nodes always on and sleeping.
func energy(bin, shared string) error {
	dir, err := os.MkdirTemp("", "energy-exp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Println("## Seed 002: energy-aware placement")
	fmt.Println()
	if err := energyDefaults(bin, dir); err != nil {
		return err
	}
	return energyContention(bin, shared, dir)
}

// gavelCluster is the heterogeneous cluster of the issue-13 tables: 12
// nodes of 4 GPUs.
const gavelCluster = "--gpus v100=16,p100=16,k80=16"

// gavelStyle writes the Gavel-style trace of n jobs at rate jobs per hour
// with seed into dir (scripts/gavelstyle) and returns its path.
func gavelStyle(dir string, n int, rate, seed string) (string, error) {
	path := filepath.Join(dir, fmt.Sprintf("gavel-n%d-r%s-s%s.jsonl", n, rate, seed))
	out, err := exec.Command("go", "run", "./scripts/gavelstyle", "-n", fmt.Sprint(n), "-rate", rate, "-seed", seed).Output()
	if err != nil {
		return "", fmt.Errorf("gavelstyle -rate %s -seed %s: %w", rate, seed, err)
	}
	return path, os.WriteFile(path, out, 0o644)
}

// energyDefaults prints issue 13's tables: the headline run and a grid of
// arrival rates, seeds and policies, all with the documented defaults.
func energyDefaults(bin, dir string) error {
	trace, err := gavelStyle(dir, 300, "8", "1")
	if err != nil {
		return err
	}
	fmt.Printf("### 300 Gavel-style jobs on %s, the defaults\n\n", gavelCluster)
	fmt.Printf("`go run ./scripts/gavelstyle -n 300 > g300.jsonl` (8 jobs/hour, seed 1); "+
		"`gpusched sim --trace g300.jsonl %s --placer L [--sleep=false] --json` (fifo).\n\n", gavelCluster)
	fmt.Println("| placer | nodes | energy (kWh) | avg JCT (s) | p99 JCT (s) | avg queue (s) | makespan (s) | util |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, c := range []struct{ name, flags string }{{"sleep (default)", ""}, {"on (`--sleep=false`)", "--sleep=false"}} {
		for _, pl := range energyPlacers {
			s, err := run(bin, strings.Fields(fmt.Sprintf("--trace %s %s %s --placer %s", trace, gavelCluster, c.flags, pl)))
			if err != nil {
				return err
			}
			fmt.Printf("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f |\n", pl, c.name, s.EnergyKWh, s.AvgJCT, s.P99JCT,
				s.AvgQueue, s.Makespan, s.GPUUtil)
		}
	}
	fmt.Println()
	return energyGrid(bin, dir)
}

// energyGrid prints pack, spread and energy with the defaults on 300-job
// Gavel-style traces at several rates, seeds and queue policies, and how
// often energy meets issue 13's target: less energy than both, average JCT
// at most 10 % above the better.
func energyGrid(bin, dir string) error {
	rates, seeds := []string{"0.25", "0.5", "1", "2", "8"}, []string{"1", "2", "3"}
	policies := []string{"fifo", "fifo --backfill", "las"}
	fmt.Printf("### 300 Gavel-style jobs: rates, seeds and policies, the defaults\n\n")
	fmt.Printf("`go run ./scripts/gavelstyle -n 300 -rate R -seed S > t.jsonl`; `gpusched sim --trace t.jsonl %s "+
		"--policy P --placer L --json`. Δ: energy's figure against the better of pack and spread; ✓: issue 13's target "+
		"(less energy than both, average JCT at most 10 %% above the better).\n\n", gavelCluster)
	fmt.Println("| jobs/hour | seed | policy | energy kWh: pack / spread / energy | Δ energy | avg JCT (s): pack / spread / energy | Δ JCT | target |")
	fmt.Println("| ---: | ---: | --- | ---: | ---: | ---: | ---: | :---: |")
	met, total := 0, 0
	var sumE, sumJ float64
	for _, rate := range rates {
		for _, seed := range seeds {
			trace, err := gavelStyle(dir, 300, rate, seed)
			if err != nil {
				return err
			}
			for _, pol := range policies {
				var s [3]summary
				for i, pl := range energyPlacers {
					if s[i], err = run(bin, strings.Fields(fmt.Sprintf("--trace %s %s --policy %s --placer %s", trace, gavelCluster, pol, pl))); err != nil {
						return err
					}
				}
				bestE, bestJ := min(s[0].EnergyKWh, s[1].EnergyKWh), min(s[0].AvgJCT, s[1].AvgJCT)
				dE, dJ := s[2].EnergyKWh/bestE-1, s[2].AvgJCT/bestJ-1
				ok := s[2].EnergyKWh < bestE && s[2].AvgJCT <= 1.1*bestJ
				mark := ""
				if ok {
					mark, met = "✓", met+1
				}
				total, sumE, sumJ = total+1, sumE+dE, sumJ+dJ
				fmt.Printf("| %s | %s | %s | %.0f / %.0f / %.0f | %+.1f %% | %.0f / %.0f / %.0f | %+.1f %% | %s |\n", rate, seed, pol,
					s[0].EnergyKWh, s[1].EnergyKWh, s[2].EnergyKWh, 100*dE, s[0].AvgJCT, s[1].AvgJCT, s[2].AvgJCT, 100*dJ, mark)
			}
		}
	}
	fmt.Printf("\nTarget met in %d of %d runs; mean Δ energy %+.1f %%, mean Δ JCT %+.1f %%.\n\n", met, total,
		100*sumE/float64(total), 100*sumJ/float64(total))
	return nil
}

// energyWorkload is one table of issue 5's experiments: a trace, a queue
// policy and a cluster, run with contention, nodes always on and sleeping.
type energyWorkload struct {
	title, args string
}

// energyContention prints issue 5's tables, with --contention, on a Philly
// slice and on the Gavel-style trace with datasets on the heterogeneous
// cluster with storage; nodes always on (--sleep=false) and sleeping (the
// default).
func energyContention(bin, shared, dir string) error {
	philly := shared + "/traces/philly/philly.csv"
	hetero := "--gpus v100=128,p100=128,k80=128 --gpus-per-node 8"
	var ws []energyWorkload
	for _, pol := range []string{"fifo --backfill", "las"} {
		ws = append(ws, energyWorkload{"first 5,000 Philly jobs, " + pol + ", v100=128,p100=128,k80=128 (8/node), contention",
			"--trace " + philly + " --limit 5000 --policy " + pol + " " + hetero})
	}
	for _, pol := range []string{"fifo --backfill", "las"} {
		ws = append(ws, energyWorkload{"Gavel-style trace with datasets (400 jobs), " + pol + ", heterogeneous cluster with storage, contention",
			"--trace testdata/traces/gavel-style.jsonl --policy " + pol + " --cluster testdata/clusters/storage.yaml"})
	}
	for _, w := range ws {
		if err := energyTable(bin, dir, w); err != nil {
			return err
		}
	}
	return nil
}

// energyTable prints one workload's table: every placer with nodes always
// on and sleeping.
func energyTable(bin, dir string, w energyWorkload) error {
	trace := strings.Fields(w.args)[1]
	if _, err := os.Stat(trace); err != nil {
		fmt.Printf("### %s\n\nskipped: %s not found\n\n", w.title, trace)
		return nil
	}
	fmt.Printf("### %s\n\n`gpusched sim %s --contention [--sleep=false] --placer L --json`; pauses counted in `--events`.\n\n",
		w.title, w.args)
	fmt.Println("| placer | nodes | energy (kWh) | avg JCT (s) | p99 JCT (s) | avg queue (s) | makespan (s) | util | pauses |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, c := range []struct{ name, flags string }{{"on", "--sleep=false"}, {"sleep", ""}} {
		for _, pl := range energyPlacers {
			events := filepath.Join(dir, "ev.jsonl")
			args := strings.Fields(fmt.Sprintf("%s --contention %s --placer %s --events %s", w.args, c.flags, pl, events))
			s, err := run(bin, args)
			if err != nil {
				return err
			}
			log, err := os.ReadFile(events)
			if err != nil {
				return err
			}
			pauses := bytes.Count(log, []byte(`"event":"pause"`))
			fmt.Printf("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f | %d |\n", pl, c.name, s.EnergyKWh, s.AvgJCT, s.P99JCT,
				s.AvgQueue, s.Makespan, s.GPUUtil, pauses)
		}
	}
	fmt.Println()
	return nil
}
