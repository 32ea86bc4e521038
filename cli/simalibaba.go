package cli

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/metrics"
	"github.com/gpusched/gpusched/sim/trace"
)

// alibabaNodesGlob names the Alibaba node list that `gpusched sim` takes
// as the cluster of an Alibaba pod list given without --cluster or --gpus:
// the one file of the pod list's folder that matches it.
const alibabaNodesGlob = "openb_node_list_gpu_node*.csv"

// assumedType gives the figures of a GPU model of an Alibaba node list
// that the catalog lacks (G2 and G3 are anonymised): a T4's 16 GiB and
// 8.1 TFLOPS, an assumption (docs/GPUS.md). Replayed Alibaba durations do
// not depend on them (sameSpeed).
func assumedType(name string) config.GPUTypeSpec {
	mem, tflops := 16384, 8.1
	return config.GPUTypeSpec{Name: name, MemMiB: &mem, TFLOPS: &tflops}
}

// readAlibabaNodes reads an Alibaba node list and turns it into a cluster
// file (alibabaFile).
func readAlibabaNodes(path string, data []byte) (*config.File, int, error) {
	nodes, err := trace.ReadAlibabaNodes(bytes.NewReader(data), path)
	if err != nil {
		return nil, 0, usageError{err}
	}
	f, cpuOnly := alibabaFile(nodes)
	if len(f.Nodes) == 0 {
		return nil, 0, badInput("%s: no node has a GPU (%d CPU-only nodes)", path, cpuOnly)
	}
	return f, cpuOnly, nil
}

// alibabaFile turns an Alibaba node list into a cluster file: one nodes
// entry per node with GPUs — its model in lower case, its GPUs, CPU and
// memory — and the models the catalog lacks declared with assumedType. It
// returns how many CPU-only nodes it left out.
func alibabaFile(nodes []trace.AlibabaNode) (*config.File, int) {
	f := &config.File{}
	declared, cpuOnly := map[string]bool{}, 0
	for _, n := range nodes {
		if n.GPUs == 0 {
			cpuOnly++
			continue
		}
		typ := strings.ToLower(n.Model)
		if _, ok := config.LookupType(typ); !ok && !declared[typ] {
			declared[typ] = true
			f.GPUTypes = append(f.GPUTypes, assumedType(typ))
		}
		cpu := config.AmountOf(strconv.FormatInt(n.CPUMilli, 10) + "m")
		mem := config.AmountOf(strconv.FormatInt(n.MemMiB, 10) + "Mi")
		f.Nodes = append(f.Nodes, config.NodeSpec{Name: n.Name, GPUType: typ, GPUs: n.GPUs, CPUs: &cpu, Memory: &mem})
	}
	return f, cpuOnly
}

// isAlibabaTrace reports whether the trace of o is an Alibaba pod list:
// --format alibaba, or auto on a file whose first line is its header.
func isAlibabaTrace(o *simOptions) bool {
	switch {
	case o.trace == "":
		return false
	case o.format == "alibaba":
		return true
	case o.format != "auto" && o.format != "":
		return false
	}
	f, err := os.Open(o.trace)
	if err != nil {
		return false // loadTrace reports it
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := f.Read(head)
	format, err := trace.Detect(o.trace, head[:n])
	return err == nil && format == "alibaba" && !trace.IsAlibabaNodes(head[:n])
}

// alibabaNodesBeside finds the node list of an Alibaba pod list: the one
// file matching alibabaNodesGlob in its folder.
func alibabaNodesBeside(podList string) (string, error) {
	dir := filepath.Dir(podList)
	matches, err := filepath.Glob(filepath.Join(dir, alibabaNodesGlob))
	if err != nil {
		return "", badInput("--trace %s: %w", podList, err)
	}
	slices.Sort(matches)
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", badInput("--trace %s is an Alibaba pod list, and no node list (%s) lies beside it: "+
			"give the cluster with --cluster (a cluster file or openb_node_list_gpu_node.csv) or --gpus", podList, alibabaNodesGlob)
	}
	return "", badInput("--trace %s: several node lists lie beside it (%s): choose one with --cluster",
		podList, strings.Join(matches, ", "))
}

// sameSpeed returns c with every GPU type rated as ref, for the profile
// table of a trace whose durations are wall-clock times on unknown types
// (trace.Trace.WallClock): a duration job without a job type then runs
// for its duration on every type.
func sameSpeed(c *model.Cluster, ref model.GPUType) (*model.Cluster, error) {
	types := slices.Clone(c.Types)
	for i := range types {
		types[i].TFLOPS = ref.TFLOPS
	}
	s, err := model.NewCluster(types, c.Nodes)
	if err != nil {
		return nil, fmt.Errorf("rate the cluster's types as %s: %w", ref.Name, err)
	}
	return s, nil
}

// describeSkipped writes what a trace's reader left out, largest count
// first: "3,078 tasks that shares a GPU (...), 1,088 ...".
func describeSkipped(skipped map[string]int) (int, string) {
	reasons := make([]string, 0, len(skipped))
	total := 0
	for why, n := range skipped {
		reasons = append(reasons, why)
		total += n
	}
	slices.SortFunc(reasons, func(a, b string) int {
		if skipped[a] != skipped[b] {
			return skipped[b] - skipped[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(reasons))
	for i, why := range reasons {
		parts[i] = fmt.Sprintf("%d %s", skipped[why], why)
	}
	return total, strings.Join(parts, "; ")
}

// setSkipped copies what the trace's reader left out into the summary;
// nothing when it left nothing out.
func setSkipped(sum *metrics.Summary, skipped map[string]int) {
	total, _ := describeSkipped(skipped)
	if total == 0 {
		return
	}
	sum.Skipped, sum.SkippedReasons = &total, maps.Clone(skipped)
}
