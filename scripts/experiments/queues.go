package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/internal/assets"
)

// queueSummary is the part of a summary about the teams' queues.
type queueSummary struct {
	AvgJCT      float64  `json:"avg_jct_s"`
	Makespan    float64  `json:"makespan_s"`
	Preemptions int      `json:"preemptions"`
	Reclaims    *int     `json:"reclaims"`
	Jain        *float64 `json:"jain_index"`
	Queues      []struct {
		Name         string  `json:"name"`
		Jobs         int     `json:"jobs"`
		AvgJCT       float64 `json:"avg_jct_s"`
		GPUHours     float64 `json:"gpu_hours"`
		NormGPUHours float64 `json:"norm_gpu_hours"`
	} `json:"queues"`
}

// runQueues runs one simulation and decodes its queue figures.
func runQueues(bin string, args []string) (queueSummary, error) {
	var s queueSummary
	out, err := runOut(bin, args)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(out, &s)
}

// heteroTrace is the synthetic trace of the type-weighted fair-share
// experiment, written (deterministically) by queues.
const heteroTrace = "testdata/traces/queues/hetero.jsonl"

// queues prints the tables of issue 18: Jain's index of Philly's virtual
// clusters as queues, and type-weighted against plain GPU-hour fair share on
// a heterogeneous cluster.
func queues(bin, shared string) error {
	fmt.Println("## Issue 18: teams' queues and fair share")
	fmt.Println()
	if err := phillyVCs(bin, shared); err != nil {
		return err
	}
	if err := writeHeteroTrace(heteroTrace); err != nil {
		return err
	}
	return typeWeighted(bin)
}

// phillyVCs replays Philly with its virtual clusters as queues of equal
// weight.
func phillyVCs(bin, shared string) error {
	philly := shared + "/traces/philly/philly.csv"
	if _, err := os.Stat(philly); err != nil {
		fmt.Printf("### Philly's virtual clusters as queues\n\nskipped: %s not found\n\n", philly)
		return nil
	}
	for _, gpus := range []string{"1000", "600"} {
		base := "--trace " + philly + " --gpus v100=" + gpus + " --gpus-per-node 8 --queue-from vc --sleep=false"
		fmt.Printf("### Philly's virtual clusters (15, and the default queue for one job without) as queues of weight 1 on v100=%s\n\n"+
			"`gpusched sim %s --policy P --fair-share F --json`\n\n", gpus, base)
		fmt.Println("| policy | fair share | avg JCT (s) | Jain's index | preemptions | reclaims |")
		fmt.Println("| --- | --- | ---: | ---: | ---: | ---: |")
		for _, pol := range []string{"fifo", "tiresias"} {
			for _, fs := range []string{"none", "type-weighted"} {
				s, err := runQueues(bin, strings.Fields(base+" --policy "+pol+" --fair-share "+fs))
				if err != nil {
					return err
				}
				fmt.Printf("| %s | %s | %.1f | %s | %d | %s |\n", pol, fs, s.AvgJCT, optFloat(s.Jain), s.Preemptions, optInt(s.Reclaims))
			}
		}
		fmt.Println()
	}
	return nil
}

// typeWeighted compares the fair-share measures on v100=16,k80=16.
func typeWeighted(bin string) error {
	base := "--trace " + heteroTrace + " --gpus v100=16,k80=16 --queue-from queue --policy fifo --backfill --sleep=false"
	fmt.Printf("### Type-weighted against GPU-hour fair share on v100=16,k80=16\n\n`gpusched sim %s --fair-share F "+
		"--fair-share-half-life H --json`\n\n", base)
	fmt.Println("| fair share | half-life | Jain's index | vision norm. GPU-h | recsys norm. GPU-h | vision avg JCT (s) | recsys avg JCT (s) | avg JCT (s) | makespan (s) |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, hl := range []string{"0", "6h", "1h"} {
		for _, fs := range []string{"none", "gpu-hours", "type-weighted"} {
			if fs == "none" && hl != "0" {
				continue
			}
			s, err := runQueues(bin, strings.Fields(base+" --fair-share "+fs+" --fair-share-half-life "+hl))
			if err != nil {
				return err
			}
			q := map[string]int{}
			for i, x := range s.Queues {
				q[x.Name] = i
			}
			v, r := s.Queues[q["vision"]], s.Queues[q["recsys"]]
			fmt.Printf("| %s | %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", fs, hl, optFloat(s.Jain),
				v.NormGPUHours, r.NormGPUHours, v.AvgJCT, r.AvgJCT, s.AvgJCT, s.Makespan)
		}
	}
	fmt.Println()
	return nil
}

func optFloat(f *float64) string {
	if f == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", *f)
}

func optInt(n *int) string {
	if n == nil {
		return "n/a"
	}
	return fmt.Sprint(*n)
}

// writeHeteroTrace writes the synthetic trace of typeWeighted: queue
// "vision" submits 300 one-GPU jobs of types that run 7–12 times faster on
// V100 than on K80 (ResNet-50, ResNet-18, CycleGAN), one every 120 s on
// average; queue "recsys" 900 jobs of types that run about as fast on K80
// (Recommendation, A3C), one every 40 s. Each job runs 30–120 minutes on a
// V100 (steps from Gavel's matrix). Seeded: the same file every time.
func writeHeteroTrace(path string) error {
	m, err := profile.ParseMatrix("embedded", assets.Throughputs())
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(18, 2026))
	type line struct {
		submit float64
		job    map[string]any
	}
	var lines []line
	for _, q := range []struct {
		name   string
		models []string
		mean   float64
		n      int
	}{
		{"vision", []string{"ResNet-50 (batch size 64)", "ResNet-50 (batch size 128)", "CycleGAN", "ResNet-18 (batch size 256)"}, 120, 300},
		{"recsys", []string{"Recommendation (batch size 512)", "Recommendation (batch size 2048)", "Recommendation (batch size 8192)", "A3C"}, 40, 900},
	} {
		t := 0.0
		for range q.n {
			t += rng.ExpFloat64() * q.mean
			model := q.models[rng.IntN(len(q.models))]
			pts := m.Points(model, "v100")
			if len(pts) == 0 {
				return fmt.Errorf("no v100 throughput for %s", model)
			}
			secs := 1800 + rng.Float64()*5400
			lines = append(lines, line{math.Round(t), map[string]any{"submit_s": math.Round(t), "gpus": 1, "model": model,
				"steps": int64(pts[0].Rate * secs), "queue": q.name}})
		}
	}
	slices.SortStableFunc(lines, func(a, b line) int {
		switch {
		case a.submit < b.submit:
			return -1
		case a.submit > b.submit:
			return 1
		}
		return 0
	})
	var b strings.Builder
	for i, l := range lines {
		l.job["id"] = fmt.Sprintf("j%d", i)
		data, err := json.Marshal(l.job)
		if err != nil {
			return err
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
