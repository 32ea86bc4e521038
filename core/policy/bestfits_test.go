package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpusched/gpusched/core/lp"
	"github.com/gpusched/gpusched/core/model"
)

// speedTable is a profile by job ID: speed per type, whatever the count.
type speedTable map[string][]float64

func (p speedTable) Speed(j *model.Job, t, _ int) float64 { return p[j.Spec.ID][t] }

// TestBestFitsIsTheOptimum is a differential test of Alloc.bestFits: on
// random instances (three types of 8 GPUs, up to eight jobs of 1, 2 or 4
// GPUs, random speeds, some types unusable) where every job fits on its
// fastest type, the X that gittins sets without the program is the
// program's optimum, which is unique there whatever the positive weights:
// each job reaches the bound of its own value, its best speed. Where the
// jobs do not all fit, bestFits must decline.
func TestBestFitsIsTheOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 1))
	fitted, declined := 0, 0
	for trial := range 300 {
		s, best := randomInstance(t, r)
		a := &Alloc{Objective: Gittins, Round: 360 * model.Second}
		a.forCluster(s.Cluster)
		a.account(s, 0, false)
		for _, j := range a.tracked {
			if b := a.jobs[j].best; b != best[j.Spec.ID] {
				t.Fatalf("trial %d: job %s: best speed %v, the profile's %v", trial, j.Spec.ID, b, best[j.Spec.ID])
			}
		}
		fits := a.bestFits(s)
		if fits != allFitBest(s, a) {
			t.Fatalf("trial %d: bestFits said %v, the demand per best type says otherwise", trial, fits)
		}
		if !fits {
			declined++
			continue
		}
		fitted++
		want, value := solveRel(t, s, a)
		used := make([]float64, len(s.Cluster.Types))
		got := 0.0
		for i, j := range a.tracked {
			st := a.jobs[j]
			b := max(st.speed[0], st.speed[1], st.speed[2])
			for k, x := range st.x {
				used[k] += x * float64(st.gpus)
				got += x * st.speed[k] / b
				// The interior-point solver's answer is within about 1e-5 of
				// the vertex.
				if math.Abs(x-want[i*len(s.Cluster.Types)+k]) > 1e-4 {
					t.Fatalf("trial %d: job %s type %d: bestFits %v, the program %v", trial, j.Spec.ID, k, x, want[i*len(s.Cluster.Types)+k])
				}
			}
		}
		for k, u := range used {
			if u > float64(s.Cluster.TypeGPUs(k)) {
				t.Fatalf("trial %d: type %d: bestFits uses %v GPUs of %d", trial, k, u, s.Cluster.TypeGPUs(k))
			}
		}
		if got < value-1e-6 {
			t.Fatalf("trial %d: bestFits's value %v below the program's %v", trial, got, value)
		}
	}
	if fitted < 50 || declined < 50 {
		t.Fatalf("instances: %d fitted, %d declined; the generator should give many of both", fitted, declined)
	}
}

// randomInstance returns a state of waiting jobs and each job's best speed.
func randomInstance(t *testing.T, r *rand.Rand) (*model.State, map[string]float64) {
	t.Helper()
	ts := []model.GPUType{{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, {Name: "p100", MemMiB: 16384, TFLOPS: 10.6}, {Name: "k80", MemMiB: 12288, TFLOPS: 4.4}}
	ns := []model.Node{{Name: "a", Type: 0, GPUs: 8}, {Name: "b", Type: 1, GPUs: 8}, {Name: "c", Type: 2, GPUs: 8}}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		t.Fatal(err)
	}
	prof := speedTable{}
	best := map[string]float64{}
	s := model.NewState(c, prof)
	for i := range 1 + r.IntN(8) {
		id := fmt.Sprint("j", i)
		sp := make([]float64, 3)
		for k := range sp {
			if r.IntN(4) > 0 {
				sp[k] = 0.05 + r.Float64()
			}
		}
		sp[r.IntN(3)] = 0.05 + r.Float64() // at least one usable type
		prof[id] = sp
		best[id] = max(sp[0], sp[1], sp[2])
		g := []int{1, 2, 4}[r.IntN(3)]
		s.Submit(model.NewJob(model.JobSpec{ID: id, GPUs: g, MinGPUs: g, MaxGPUs: g}, i, -1, 1000))
	}
	return s, best
}

// allFitBest reports whether the GPUs asked for on each job's fastest type
// are within the type's.
func allFitBest(s *model.State, a *Alloc) bool {
	asked := make([]int, len(s.Cluster.Types))
	for _, j := range a.tracked {
		st := a.jobs[j]
		bt := 0
		for k, v := range st.speed {
			if v > st.speed[bt] {
				bt = k
			}
		}
		asked[bt] += st.gpus
	}
	for k, n := range asked {
		if n > s.Cluster.TypeGPUs(k) {
			return false
		}
	}
	return true
}

// solveRel solves the program with every job's weight 1 (the value of x_jk
// is j's speed on k over its best) and returns X and its value.
func solveRel(t *testing.T, s *model.State, a *Alloc) ([]float64, float64) {
	t.Helper()
	k := len(s.Cluster.Types)
	n := len(a.tracked)
	p := &lp.Problem{Jobs: n, Types: k, Use: make([]bool, n*k), Value: make([]float64, n*k), Size: make([]float64, n), Cap: make([]float64, k)}
	for tt := range k {
		p.Cap[tt] = float64(s.Cluster.TypeGPUs(tt))
	}
	for i, j := range a.tracked {
		st := a.jobs[j]
		p.Size[i] = float64(st.gpus)
		b := max(st.speed[0], st.speed[1], st.speed[2])
		for tt, v := range st.speed {
			p.Use[i*k+tt] = v > 0
			p.Value[i*k+tt] = v / b
		}
	}
	var solver lp.Solver
	sol, err := solver.Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	value := 0.0
	for i, x := range sol.X {
		value += x * p.Value[i]
	}
	return sol.X, value
}
