package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
)

// vecNode is a one-type node with GPUs and a capacity.
type vecNode struct {
	gpus int
	capa model.Resources
}

// vecJob is a waiting job of gpus GPUs, replicas of rg GPUs (0: one),
// asking req per replica.
type vecJob struct {
	gpus, rg int
	req      model.Resources
}

func vecState(t *testing.T, nodes []vecNode, jobs []vecJob) *model.State {
	t.Helper()
	var ns []model.Node
	for i, n := range nodes {
		ns = append(ns, model.Node{Name: fmt.Sprint("n", i), GPUs: n.gpus, Capacity: n.capa})
	}
	c, err := model.NewCluster([]model.GPUType{{Name: "a", MemMiB: 16384, TFLOPS: 1}}, ns)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, unit{})
	for i, j := range jobs {
		spec := model.JobSpec{ID: fmt.Sprint("j", i), GPUs: j.gpus, MinGPUs: j.gpus, MaxGPUs: j.gpus, ReplicaGPUs: j.rg, Requests: j.req}
		s.Submit(model.NewJob(spec, i, -1, 100))
	}
	return s
}

// TestScheduleVector: scenarios with hand-computed outcomes where CPU,
// memory or pods, not GPUs, decide what starts and where.
func TestScheduleVector(t *testing.T) {
	cpu := func(milli int64) model.Resources { return model.Resources{model.ResourceCPU: milli} }
	tests := []struct {
		name   string
		nodes  []vecNode
		jobs   []vecJob
		placer engine.Placer
		want   map[string]string // job → its GPUs' nodes, or the wait reason
	}{
		{"the issue's case: 4 GPUs, 4 CPUs, three 1-GPU jobs asking 2 CPUs",
			[]vecNode{{4, cpu(4000)}}, []vecJob{{1, 0, cpu(2000)}, {1, 0, cpu(2000)}, {1, 0, cpu(2000)}}, placer.Pack{},
			map[string]string{"j0": "n0", "j1": "n0", "j2": "not enough free cpu on the nodes with free GPUs of a feasible type"}},
		{"memory: the second job goes to the node that still has memory",
			[]vecNode{{4, model.Resources{model.ResourceMemory: 64 << 30}}, {4, model.Resources{model.ResourceMemory: 64 << 30}}},
			[]vecJob{{1, 0, model.Resources{model.ResourceMemory: 40 << 30}}, {1, 0, model.Resources{model.ResourceMemory: 40 << 30}}}, placer.Pack{},
			map[string]string{"j0": "n0", "j1": "n1"}},
		{"pods: a node of 2 pods holds two 1-GPU replicas of a 4-GPU job, the other two go elsewhere",
			[]vecNode{{4, model.Resources{model.ResourcePods: 2}}, {4, model.Resources{model.ResourcePods: 8}}},
			[]vecJob{{1, 0, nil}, {4, 1, nil}}, placer.Pack{},
			map[string]string{"j0": "n0", "j1": "n1,n1,n1,n1"}},
		{"a multi-node job takes, on the fewest nodes, only what its replicas' CPUs allow on each",
			[]vecNode{{4, cpu(2000)}, {4, cpu(2000)}, {4, cpu(8000)}},
			[]vecJob{{6, 1, cpu(1000)}}, placer.Pack{},
			map[string]string{"j0": "n2,n2,n2,n2,n0,n0"}},
		{"fit leaves no GPU stranded where pack would",
			[]vecNode{{4, cpu(8000)}, {4, cpu(32000)}}, []vecJob{{1, 0, cpu(8000)}}, &placer.Fit{},
			map[string]string{"j0": "n1"}},
		{"pack on the same case strands n0's three other GPUs",
			[]vecNode{{4, cpu(8000)}, {4, cpu(32000)}}, []vecJob{{1, 0, cpu(8000)}}, placer.Pack{},
			map[string]string{"j0": "n0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := vecState(t, tc.nodes, tc.jobs)
			e, err := engine.New(policy.FIFO{Backfill: true}, tc.placer, nil)
			if err != nil {
				t.Fatal(err)
			}
			plan := e.Schedule(s, 0)
			got := map[string]string{}
			for _, a := range plan.Start {
				var names []string
				for _, g := range a.GPUs {
					names = append(names, s.Cluster.Nodes[g.Node].Name)
				}
				got[a.Job.Spec.ID] = strings.Join(names, ",")
				if err := s.Start(a.Job, a.GPUs); err != nil {
					t.Fatalf("the model refuses the plan: %v", err)
				}
			}
			for _, d := range plan.Trace {
				if d.Status == engine.Blocked {
					got[d.Job] = d.Reason
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestPoolStarved: free GPUs on a node whose CPU no waiting job fits in
// are out of the pool's free count until a job there is released.
func TestPoolStarved(t *testing.T) {
	cpu := func(milli int64) model.Resources { return model.Resources{model.ResourceCPU: milli} }
	s := vecState(t, []vecNode{{4, cpu(4000)}, {4, cpu(16000)}}, []vecJob{{1, 0, cpu(3000)}, {1, 0, cpu(2000)}})
	running := s.Waiting()[0]
	if err := s.Start(running, []model.GPU{{Node: 0, Index: 0}}); err != nil {
		t.Fatal(err)
	}
	p := engine.NewPool(s.Cluster)
	p.Reset(s)
	// n0 has 1000m free; the least any job of the round asks is 2000m.
	if p.Free(0) != 4 || p.Starved(0) != 3 || p.NodeFree(0) != 0 {
		t.Fatalf("free %d, starved %d, n0 free %d; want 4, 3, 0", p.Free(0), p.Starved(0), p.NodeFree(0))
	}
	p.Release(running)
	if p.Free(0) != 8 || p.Starved(0) != 0 || p.NodeFree(0) != 4 {
		t.Fatalf("after the release: free %d, starved %d, n0 free %d; want 8, 0, 4", p.Free(0), p.Starved(0), p.NodeFree(0))
	}
	if !p.Retakable(running, running.Alloc) {
		t.Fatal("the released job cannot take its GPUs back")
	}
	p.TakeJob(running, running.Alloc)
	if p.Free(0) != 4 || p.Starved(0) != 3 {
		t.Fatalf("after taking back: free %d, starved %d; want 4, 3", p.Free(0), p.Starved(0))
	}
}

// TestScheduleVectorReasonStarved: when every free GPU starves, the wait
// reason names the resource.
func TestScheduleVectorReasonStarved(t *testing.T) {
	mem := func(gib int64) model.Resources { return model.Resources{model.ResourceMemory: gib << 30} }
	s := vecState(t, []vecNode{{8, mem(100)}}, []vecJob{{1, 0, mem(90)}, {1, 0, mem(20)}})
	if err := s.Start(s.Waiting()[0], []model.GPU{{Node: 0, Index: 0}}); err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(policy.FIFO{}, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := e.Schedule(s, 0)
	want := "j1:blocked:not enough free memory on the nodes with free GPUs of a feasible type"
	if got := fmt.Sprintf("%s:%s:%s", plan.Trace[0].Job, plan.Trace[0].Status, plan.Trace[0].Reason); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestPreemptForCPU: under srtf a short job kept waiting by CPU, not
// GPUs, preempts the long job that holds the CPU: one node of 8 GPUs and
// 4 CPUs, the long job on 1 GPU with 4 CPUs, the short one asking 2.
func TestPreemptForCPU(t *testing.T) {
	cpu := func(milli int64) model.Resources { return model.Resources{model.ResourceCPU: milli} }
	types := []model.GPUType{{Name: "a", MemMiB: 16384, TFLOPS: 1}}
	c, err := model.NewCluster(types, []model.Node{{Name: "n0", GPUs: 8, Capacity: cpu(4000)}})
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, unit{})
	long := model.NewJob(model.JobSpec{ID: "long", GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Duration: 1000 * model.Second, Requests: cpu(4000)}, 0, -1, 1000)
	short := model.NewJob(model.JobSpec{ID: "short", Submit: 1, GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Duration: 10 * model.Second, Requests: cpu(2000)}, 1, -1, 10)
	s.Submit(long)
	if err := s.Start(long, []model.GPU{{Node: 0, Index: 0}}); err != nil {
		t.Fatal(err)
	}
	long.Rate = 1
	s.Submit(short)
	e, err := engine.New(&policy.SRTF{}, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := e.Schedule(s, 2*model.Second)
	if got, want := fmt.Sprint(trace(plan)), "[short:placed long:preempted]"; got != want {
		t.Errorf("trace %s, want %s", got, want)
	}
}
