package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/internal/assets"
	"github.com/gpusched/gpusched/sim"
	"github.com/gpusched/gpusched/sim/trace"
)

// The settings of `gpusched sim` that the replay shares with its defaults.
const (
	// RefType is the reference GPU type (gpusched sim --ref-type).
	RefType = "v100"
	// Seed is the seed of the run's random choices (gpusched sim --seed).
	Seed = 1
	// RestartOverhead is the pause of a restart (--restart-overhead).
	RestartOverhead = 30 * time.Second
)

// Node is one node of the replayed cluster: its name, GPU type (with the
// type's memory and rated performance, for a type the catalog lacks) and
// count, and its power model.
type Node struct {
	Name    string
	GPUType string
	MemMiB  int
	TFLOPS  float64
	GPUs    int
	Power   power.NodePower
	GPU     power.GPUPower
}

// Job is one replayed job: when it was submitted, on how many GPUs of which
// type it ran, for how long in all, and its owner.
type Job struct {
	ID      string
	Submit  time.Time
	GPUs    int
	GPUType string
	Seconds float64
	User    string
}

// clusterFile is the YAML of a cluster file, in its keys' order.
type clusterFile struct {
	GPUTypes []gpuTypeEntry `json:"gpu_types"`
	Nodes    []nodeEntry    `json:"nodes"`
}

type gpuTypeEntry struct {
	Name   string             `json:"name"`
	MemMiB *int               `json:"mem_mib,omitempty"`
	TFLOPS *float64           `json:"tflops,omitempty"`
	Power  map[string]float64 `json:"power"`
}

type nodeEntry struct {
	Name    string         `json:"name"`
	GPUType string         `json:"gpu_type"`
	GPUs    int            `json:"gpus"`
	Power   map[string]any `json:"power"`
}

// traceLine is one job of the native trace format.
type traceLine struct {
	ID       string      `json:"id"`
	Submit   float64     `json:"submit_s"`
	GPUs     int         `json:"gpus"`
	Duration float64     `json:"duration_s"`
	Scaling  [][]float64 `json:"scaling"`
	GPUType  string      `json:"gpu_type"`
	User     string      `json:"user,omitempty"`
}

// Files returns the cluster file of nodes and the trace of jobs (those
// that ran), in the formats gpusched sim reads: every node keeps its power
// model, contention written out (a knee of 1 when it has none); every job
// runs for its total time on its GPU type, submitted relative to the
// earliest submission. A trace's duration_s is seconds on the reference
// type (RefType), so each job's is its time on its own type scaled by the
// two types' rated TFLOPS, with a one-point scaling curve at its GPU count
// so that the simulator scales it by those TFLOPS too (not by the speeds
// of a job type it would otherwise draw at random). It fails when a node's
// GPU type has no power figures or there is no node or no job.
func Files(nodes []Node, jobs []Job) (cluster, jsonl []byte, err error) {
	if len(nodes) == 0 {
		return nil, nil, errors.New("no node to replay on")
	}
	var f clusterFile
	tflops := map[string]float64{} // as the simulator reads them from the file
	for _, n := range nodes {
		if n.GPU.MaxW <= 0 || n.GPU.Validate() != nil {
			return nil, nil, fmt.Errorf("GPU type %q of node %s has no power figures", n.GPUType, n.Name)
		}
		if !slices.ContainsFunc(f.GPUTypes, func(e gpuTypeEntry) bool { return e.Name == n.GPUType }) {
			e := gpuTypeEntry{Name: n.GPUType, Power: map[string]float64{"idle_w": n.GPU.IdleW, "max_w": n.GPU.MaxW}}
			if t, ok := config.LookupType(n.GPUType); ok {
				tflops[n.GPUType] = t.TFLOPS
			} else {
				e.MemMiB, e.TFLOPS = &n.MemMiB, &n.TFLOPS
				tflops[n.GPUType] = n.TFLOPS
			}
			f.GPUTypes = append(f.GPUTypes, e)
		}
		f.Nodes = append(f.Nodes, nodeEntry{Name: n.Name, GPUType: n.GPUType, GPUs: n.GPUs, Power: nodePower(n.Power)})
	}
	cluster, err = yaml.Marshal(f)
	if err != nil {
		return nil, nil, fmt.Errorf("replay cluster: %w", err)
	}
	jsonl, err = traceFile(jobs, tflops)
	return cluster, jsonl, err
}

// nodePower is a node's power block.
func nodePower(p power.NodePower) map[string]any {
	c := p.Contention
	if c.Knee >= 1 || c.Slowdown <= 0 {
		c = power.Contention{Knee: 1}
	}
	out := map[string]any{"base_w": p.BaseW, "contention_knee": c.Knee, "contention_slowdown": c.Slowdown, "sleeps": p.Sleeps}
	if p.Sleeps {
		out["sleep_w"], out["sleep_after_s"], out["wake_s"] = p.SleepW, p.SleepAfterS, p.WakeS
	}
	return out
}

// traceFile writes the jobs that ran, by submission, their durations in
// seconds on the reference type by the TFLOPS of their types (tflops).
func traceFile(jobs []Job, tflops map[string]float64) ([]byte, error) {
	ran := slices.DeleteFunc(slices.Clone(jobs), func(j Job) bool { return !(j.Seconds >= 0.001) || j.GPUs < 1 })
	if len(ran) == 0 {
		return nil, errors.New("no job has run")
	}
	ref, ok := config.LookupType(RefType)
	if !ok || ref.TFLOPS <= 0 {
		return nil, fmt.Errorf("reference type %q unknown", RefType)
	}
	slices.SortStableFunc(ran, func(a, b Job) int { return a.Submit.Compare(b.Submit) })
	t0 := ran[0].Submit
	var buf bytes.Buffer
	for _, j := range ran {
		tf := tflops[j.GPUType]
		if !(tf > 0) {
			return nil, fmt.Errorf("job %s: GPU type %q has no rated TFLOPS to scale its time by", j.ID, j.GPUType)
		}
		line, err := json.Marshal(traceLine{ID: j.ID, Submit: ms(j.Submit.Sub(t0).Seconds()), GPUs: j.GPUs,
			Duration: ms(j.Seconds * tf / ref.TFLOPS), Scaling: [][]float64{{float64(j.GPUs), 1}},
			GPUType: j.GPUType, User: j.User})
		if err != nil {
			return nil, fmt.Errorf("replay trace: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// ms rounds seconds to the millisecond (the simulator's unit).
func ms(sec float64) float64 { return math.Round(sec*1000) / 1000 }

// Result is a replay's energy in kWh: the cluster's, and its split into
// the jobs' and the idle share.
type Result struct {
	TotalKWh, JobsKWh, IdleKWh float64
}

// Energy replays trace on cluster (the output of Files) with the queue
// policy and the pack placer, reading both as gpusched sim reads them and
// with its defaults (reference type RefType, seed Seed, restart overhead
// RestartOverhead, contention when the file declares it, idle nodes asleep
// when their power block says so, sim.DefaultSpare spare nodes), and
// returns the run's energy.
func Energy(cluster, jsonl []byte, policy string) (Result, error) {
	f, err := config.DecodeFile("replay cluster", cluster)
	if err != nil {
		return Result{}, err
	}
	c, err := f.Cluster("replay cluster")
	if err != nil {
		return Result{}, err
	}
	pw, err := f.Power("replay cluster", c)
	if err != nil {
		return Result{}, err
	}
	if !f.DeclaresContention() {
		for i := range pw.Nodes {
			pw.Nodes[i].Contention = power.Contention{Knee: 1}
		}
	}
	jobs, err := trace.Read(bytes.NewReader(jsonl), "replay trace", "jsonl")
	if err != nil {
		return Result{}, err
	}
	table, err := workload(c, jobs)
	if err != nil {
		return Result{}, err
	}
	opts := recipe.DefaultOptions()
	opts.Alloc.Seed = Seed
	eng, err := recipe.New(recipe.Names{Policy: policy, Placer: "pack", Scaler: "none"}, opts)
	if err != nil {
		return Result{}, err
	}
	res, err := sim.Run(sim.Config{Engine: eng, Cluster: c, Workload: table, Jobs: jobs,
		RestartOverhead: model.Time(RestartOverhead.Milliseconds()), Power: pw, Energy: true, Contention: f.DeclaresContention(),
		Spare: sim.DefaultSpare})
	if err != nil {
		return Result{}, fmt.Errorf("replay: %w", err)
	}
	e := res.Energy
	return Result{TotalKWh: e.TotalKWh, JobsKWh: e.TotalKWh - e.IdleKWh, IdleKWh: e.IdleKWh}, nil
}

// workload builds the profile table of the embedded throughput matrix on
// c, gives the jobs their models and memory as gpusched sim does, and
// checks their work.
func workload(c *model.Cluster, jobs []model.JobSpec) (*profile.Table, error) {
	matrix, err := profile.ParseMatrix("embedded throughput matrix", assets.Throughputs())
	if err != nil {
		return nil, err
	}
	ref, ok := model.GPUType{}, false
	if t := c.TypeIndex(RefType); t >= 0 {
		ref, ok = c.Types[t], true
	} else {
		ref, ok = config.LookupType(RefType)
	}
	if !ok {
		return nil, fmt.Errorf("reference type %q unknown", RefType)
	}
	table, err := profile.NewTable(matrix, c, ref)
	if err != nil {
		return nil, err
	}
	if len(c.Types) > 1 {
		sim.AssignModels(jobs, table.Models(), Seed)
	}
	matrix.FillPeakMem(jobs)
	for i := range jobs {
		if _, _, err := table.Work(&jobs[i]); err != nil {
			return nil, fmt.Errorf("replay trace: %w", err)
		}
	}
	return table, nil
}

// Command is the gpusched sim command line that reproduces the replay from
// the files written as DIR/cluster.yaml and DIR/trace.jsonl.
func Command(dir, policy string) string {
	return strings.Join([]string{"gpusched sim --trace", dir + "/trace.jsonl", "--cluster", dir + "/cluster.yaml",
		"--policy", policy, "--placer pack --json"}, " ")
}
