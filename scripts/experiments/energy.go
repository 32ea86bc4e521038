package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// energyWorkload is one table of the energy section: a trace, a queue
// policy and the cluster twice, nodes always on and power-managed.
type energyWorkload struct {
	title       string
	args        string // trace and policy
	on, managed string // cluster flags
}

// energy prints seed 002's tables (issue 5): pack, spread and energy with
// the same queue policy, with contention, on a Philly slice and on the
// Gavel-style trace with datasets on the heterogeneous cluster with storage.
func energy(bin, shared string) error {
	fmt.Println("## Seed 002: energy-aware placement")
	fmt.Println()
	philly := shared + "/traces/philly/philly.csv"
	hetero := "--gpus v100=128,p100=128,k80=128 --gpus-per-node 8"
	var ws []energyWorkload
	for _, pol := range []string{"fifo --backfill", "las"} {
		ws = append(ws, energyWorkload{"first 5,000 Philly jobs, " + pol + ", v100=128,p100=128,k80=128 (8/node)",
			"--trace " + philly + " --limit 5000 --policy " + pol, hetero, "--cluster testdata/clusters/hetero-sleep.yaml"})
	}
	for _, pol := range []string{"fifo --backfill", "las"} {
		ws = append(ws, energyWorkload{"Gavel-style trace with datasets (400 jobs), " + pol + ", heterogeneous cluster with storage",
			"--trace testdata/traces/gavel-style.jsonl --policy " + pol,
			"--cluster testdata/clusters/storage.yaml", "--cluster testdata/clusters/storage-sleep.yaml"})
	}
	dir, err := os.MkdirTemp("", "energy-exp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, w := range ws {
		if err := energyTable(bin, dir, w); err != nil {
			return err
		}
	}
	return nil
}

// energyTable prints one workload's table: every placer with nodes always
// on and power-managed.
func energyTable(bin, dir string, w energyWorkload) error {
	trace := strings.Fields(w.args)[1]
	if _, err := os.Stat(trace); err != nil {
		fmt.Printf("### %s\n\nskipped: %s not found\n\n", w.title, trace)
		return nil
	}
	fmt.Printf("### %s\n\n`gpusched sim %s CLUSTER --contention --placer L --json`; CLUSTER `%s` (nodes always on) or `%s` "+
		"(idle nodes sleep at 20 W); pauses counted in `--events`.\n\n", w.title, w.args, w.on, w.managed)
	fmt.Println("| placer | nodes | energy (kWh) | avg JCT (s) | p99 JCT (s) | avg queue (s) | makespan (s) | util | pauses |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, c := range []struct{ name, flags string }{{"on", w.on}, {"sleep", w.managed}} {
		for _, pl := range []string{"pack", "spread", "energy"} {
			events := filepath.Join(dir, "ev.jsonl")
			args := strings.Fields(fmt.Sprintf("%s %s --contention --placer %s --events %s", w.args, c.flags, pl, events))
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
