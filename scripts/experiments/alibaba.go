package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// alibabaSummary is the part of a summary the Alibaba tables show.
type alibabaSummary struct {
	Jobs       int                `json:"jobs"`
	Completed  int                `json:"completed"`
	AvgQueue   float64            `json:"avg_queue_s"`
	GPUUtil    float64            `json:"gpu_util"`
	Util       map[string]float64 `json:"resource_util"`
	Stranded   float64            `json:"stranded_gpus"`
	Waiting    *float64           `json:"stranded_gpus_waiting"`
	Structural int                `json:"structural_stranded_gpus"`
}

// alibaba prints issue 26's tables: the Alibaba 2023 default trace with
// pack and fit, as recorded on its own node list and on every k-th node of
// it, and as a burst (every task submitted at 0).
func alibaba(bin, shared string) error {
	dir := shared + "/traces/alibaba-v2023/"
	pods, nodes := dir+"openb_pod_list_default.csv", dir+"openb_node_list_gpu_node.csv"
	fmt.Println("## Issue 26: the Alibaba 2023 GPU trace, pack and fit")
	fmt.Println()
	if _, err := os.Stat(pods); err != nil {
		fmt.Printf("skipped: %s not found\n\n", pods)
		return nil
	}
	tmp, err := os.MkdirTemp("", "alibaba-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	burst, err := burstTrace(pods, tmp)
	if err != nil {
		return err
	}
	for _, v := range []struct {
		trace string
		every int
	}{{pods, 1}, {pods, 20}, {pods, 50}, {pods, 100}, {pods, 200}, {burst, 1}, {burst, 2}} {
		list := nodes
		if v.every > 1 {
			if list, err = everyKth(nodes, v.every, tmp); err != nil {
				return err
			}
		}
		if err := alibabaTable(bin, v.trace, list, v.every, tmp); err != nil {
			return err
		}
	}
	return nil
}

// burstTrace writes the pod list with every task created and scheduled at
// 0 and deleted after its traced run time (deletion − scheduled, or −
// creation when never scheduled) into dir as openb_pod_list_default-burst.csv.
func burstTrace(pods, dir string) (string, error) {
	data, err := os.ReadFile(pods)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	out := []string{lines[0]}
	for _, l := range lines[1:] {
		c := strings.Split(l, ",")
		created, err1 := strconv.ParseInt(c[8], 10, 64)
		deleted, err2 := strconv.ParseInt(c[9], 10, 64)
		if err1 != nil || err2 != nil || len(c) != 11 {
			return "", fmt.Errorf("%s: bad line %q", pods, l)
		}
		start, sched := created, ""
		if c[10] != "" {
			if start, err = strconv.ParseInt(c[10], 10, 64); err != nil {
				return "", fmt.Errorf("%s: bad line %q", pods, l)
			}
			sched = "0"
		}
		c[8], c[9], c[10] = "0", strconv.FormatInt(deleted-start, 10), sched
		out = append(out, strings.Join(c, ","))
	}
	path := filepath.Join(dir, "openb_pod_list_default-burst.csv")
	return path, os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644)
}

// everyKth writes the header and every k-th node of a node list (lines 2,
// 2+k, 2+2k, …) into dir and returns its path.
func everyKth(nodes string, k int, dir string) (string, error) {
	data, err := os.ReadFile(nodes)
	if err != nil {
		return "", err
	}
	lines := strings.SplitAfter(string(data), "\n")
	out := lines[0]
	for i := 1; i < len(lines); i += k {
		out += lines[i]
	}
	path := filepath.Join(dir, fmt.Sprintf("openb_node_list_gpu_node-every%d.csv", k))
	return path, os.WriteFile(path, []byte(out), 0o644)
}

// alibabaTable runs fifo and fifo --backfill with pack and fit on one node
// list and prints the table.
func alibabaTable(bin, pods, nodes string, every int, tmp string) error {
	title, name := "the whole node list (1,213 nodes, 6,212 GPUs)", nodes
	if every > 1 {
		title = fmt.Sprintf("every %s node of the node list", ordinal(every))
		name = fmt.Sprintf("openb_node_list_gpu_node-every%d.csv", every)
	}
	what, trace := "Default trace as recorded", pods
	if strings.HasSuffix(pods, "-burst.csv") {
		what, trace = "Default trace as a burst (every task at 0)", "openb_pod_list_default-burst.csv"
	}
	base := []string{"--trace", pods, "--cluster", nodes, "--sleep=false"}
	fmt.Printf("### %s on %s\n\n`gpusched sim --trace %s --cluster %s --sleep=false --policy fifo [--backfill] --placer L --json --report DIR`\n\n",
		what, title, trace, name)
	fmt.Println("| policy | placer | mean wait (s) | p50 wait (s) | p99 wait (s) | stranded GPUs | stranded while jobs wait | structural | GPU util | CPU util | memory util | completed |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, pol := range [][]string{{"--policy", "fifo"}, {"--policy", "fifo", "--backfill"}} {
		for _, pl := range []string{"pack", "fit"} {
			rep := filepath.Join(tmp, "report")
			args := append(append(append([]string{}, base...), pol...), "--placer", pl, "--report", rep)
			out, err := runOut(bin, args)
			if err != nil {
				return err
			}
			var s alibabaSummary
			if err := json.Unmarshal(out, &s); err != nil {
				return err
			}
			p50, p99, err := waits(filepath.Join(rep, "jobs.csv"))
			if err != nil {
				return err
			}
			waiting := "–"
			if s.Waiting != nil {
				waiting = fmt.Sprintf("%.2f", *s.Waiting)
			}
			fmt.Printf("| %s | %s | %.0f | %.0f | %.0f | %.2f | %s | %d | %.4f | %.4f | %.4f | %d/%d |\n",
				strings.Join(pol[1:], " "), pl, s.AvgQueue, p50, p99, s.Stranded, waiting, s.Structural,
				s.GPUUtil, s.Util["cpu"], s.Util["memory"], s.Completed, s.Jobs)
		}
	}
	fmt.Println()
	return nil
}

// waits returns the nearest-rank median and 99th percentile of the
// queue_s column of a report's jobs.csv (jobs that started).
func waits(path string) (float64, float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		return 0, 0, fmt.Errorf("%s: %v", path, err)
	}
	col := slices.Index(rows[0], "queue_s")
	var qs []float64
	for _, r := range rows[1:] {
		if r[col] == "" {
			continue
		}
		v, err := strconv.ParseFloat(r[col], 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", path, err)
		}
		qs = append(qs, v)
	}
	slices.Sort(qs)
	rank := func(p float64) float64 {
		if len(qs) == 0 {
			return 0
		}
		return qs[max(0, int(math.Ceil(p*float64(len(qs))))-1)]
	}
	return rank(0.5), rank(0.99), nil
}

// ordinal writes 2 as "2nd", 20 as "20th".
func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}
