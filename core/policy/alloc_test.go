package policy_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/policy"
)

// typed gives every job a speed per type index: speeds[job id][type].
type typed map[string][]float64

func (p typed) Speed(j *model.Job, t, _ int) float64 { return p[j.Spec.ID][t] }

// hetState is a cluster with one node of GPUs per type (types named and
// rated as given) and the jobs, all waiting, submitted in order.
func hetState(t *testing.T, names []string, tflops []float64, gpus []int, speeds typed, jobs ...string) *model.State {
	t.Helper()
	var ts []model.GPUType
	var ns []model.Node
	for i, n := range names {
		ts = append(ts, model.GPUType{Name: n, MemMiB: 16384, TFLOPS: tflops[i]})
		ns = append(ns, model.Node{Name: "n" + n, Type: i, GPUs: gpus[i]})
	}
	c, err := model.NewCluster(ts, ns)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, speeds)
	for i, id := range jobs {
		s.Submit(model.NewJob(model.JobSpec{ID: id, GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, i, -1, 1000))
	}
	return s
}

// chosen returns "job:type" for the jobs an order runs this round.
func chosen(s *model.State, ord engine.Order) []string {
	var out []string
	for i, j := range ord.Jobs {
		for t := range s.Cluster.Types {
			if ord.Types[i].Has(t) {
				out = append(out, j.Spec.ID+":"+s.Cluster.Types[t].Name)
			}
		}
	}
	return out
}

// TestGavelFIFOSendsJobsToTheLastType is a characterisation test of the
// Gavel FIFO that gpusched reproduces (policy.FIFOAlloc, Gavel's fifo):
// Gavel's code draws a type index but gives the job the last type (by name)
// that has GPUs left, and drops the drawn type from the list when the given
// type has none left. With Python's random.Random(0) the first draw is
// randrange(3) = 1: job 1 gets v100, whose last GPU that was, and p100 (the
// drawn index) is dropped; jobs 2 and 3 find room only on k80 but get
// v100 again. All three share v100's one GPU, by priority; k80 and p100
// stay idle (Gavel's log says so: "GPUs of type p100 left unused").
func TestGavelFIFOSendsJobsToTheLastType(t *testing.T) {
	one := []float64{1, 1, 1}
	s := hetState(t, []string{"v100", "p100", "k80"}, []float64{15.7, 10.6, 4.37}, []int{1, 1, 1},
		typed{"j1": one, "j2": one, "j3": one}, "j1", "j2", "j3")
	a := &policy.Alloc{Objective: policy.FIFOAlloc, Gavel: true, Round: 360 * model.Second, Seed: 0}
	ord := a.Order(s, 0, nil)
	if got := chosen(s, ord); !slices.Equal(got, []string{"j1:v100"}) {
		t.Errorf("chosen %v, want [j1:v100]", got)
	}
	if len(ord.Jobs) != 3 {
		t.Errorf("order holds %d jobs, want every active job", len(ord.Jobs))
	}
}

// TestEstSRPTOracle: knowing the remaining work, esrpt's program gives
// the fast GPU to the job that will finish first (weights E[rem]^-2: the
// short job's 1·w + the long one's 0.5·w' beats the swap).
func TestEstSRPTOracle(t *testing.T) {
	sp := []float64{2, 1}
	s := hetState(t, []string{"fast", "slow"}, []float64{2, 1}, []int{1, 1}, typed{"long": sp, "short": sp}, "long", "short")
	s.Waiting()[1].Work = 100
	a := &policy.Alloc{Objective: policy.EstSRPT, Oracle: true, Round: 360 * model.Second}
	if got := chosen(s, a.Order(s, 0, nil)); !slices.Equal(got, []string{"short:fast", "long:slow"}) {
		t.Errorf("chosen %v, want the short job on the fast GPU", got)
	}
	if a.Name() != "esrpt-oracle" || (&policy.Alloc{Objective: policy.EstSRPT}).Name() != "esrpt" {
		t.Error("names")
	}
}

// TestAllocOrders checks what every allocation policy's order must
// satisfy, round after round on a changing state: each active job once;
// types only for the chosen ones, one type each, one the job can run on;
// no type given more GPUs than it has; and the same answers from two
// policies fed the same rounds (determinism).
func TestAllocOrders(t *testing.T) {
	speeds := typed{}
	var ids []string
	for i := range 12 {
		id := fmt.Sprintf("j%02d", i)
		ids = append(ids, id)
		speeds[id] = []float64{float64(3 + i%4), float64(1 + i%3), float64(i % 2)} // some cannot run on k80
	}
	for _, obj := range []policy.Objective{policy.MaxMin, policy.MaxThroughput, policy.FinishTime, policy.EstSRPT, policy.Gittins, policy.FIFOAlloc} {
		for _, gavel := range []bool{false, true} {
			mk := func() *policy.Alloc {
				return &policy.Alloc{Objective: obj, Gavel: gavel, Round: 360 * model.Second, Realloc: 720 * model.Second}
			}
			a, b := mk(), mk()
			s := hetState(t, []string{"v100", "p100", "k80"}, []float64{15.7, 10.6, 4.37}, []int{2, 2, 2}, speeds, ids...)
			for _, j := range s.Waiting() {
				j.Spec.GPUs, j.Spec.MinGPUs, j.Spec.MaxGPUs = 1+j.Seq%3, 1+j.Seq%3, 1+j.Seq%3
			}
			for r := range 6 {
				now := model.Time(r) * 360 * model.Second
				oa, ob := a.Order(s, now, nil), b.Order(s, now, nil)
				name := fmt.Sprintf("%s gavel=%v round %d", a.Name(), gavel, r)
				if fmt.Sprint(chosen(s, oa)) != fmt.Sprint(chosen(s, ob)) {
					t.Fatalf("%s: two runs differ: %v vs %v", name, chosen(s, oa), chosen(s, ob))
				}
				checkOrder(t, name, s, oa)
				apply(t, s, oa, now)
			}
		}
	}
}

func checkOrder(t *testing.T, name string, s *model.State, ord engine.Order) {
	t.Helper()
	if len(ord.Jobs) != len(s.Running())+len(s.Waiting()) || len(ord.Types) != len(ord.Jobs) {
		t.Fatalf("%s: %d jobs, %d types, %d active", name, len(ord.Jobs), len(ord.Types), len(s.Running())+len(s.Waiting()))
	}
	used := make([]int, len(s.Cluster.Types))
	seen := map[*model.Job]bool{}
	for i, j := range ord.Jobs {
		if seen[j] {
			t.Fatalf("%s: %s twice", name, j.Spec.ID)
		}
		seen[j] = true
		n := 0
		for tt := range s.Cluster.Types {
			if ord.Types[i].Has(tt) {
				n++
				used[tt] += j.Spec.GPUs
				if s.Profile.Speed(j, tt, j.Spec.GPUs) <= 0 {
					t.Fatalf("%s: %s given type %d where it cannot run", name, j.Spec.ID, tt)
				}
			}
		}
		if n > 1 {
			t.Fatalf("%s: %s given %d types", name, j.Spec.ID, n)
		}
	}
	for tt, u := range used {
		if u > s.Cluster.TypeGPUs(tt) {
			t.Fatalf("%s: type %d given %d GPUs of %d", name, tt, u, s.Cluster.TypeGPUs(tt))
		}
	}
}

// apply realises an order the simple way (the chosen jobs run on the first
// free GPUs of their type, the others stop) and lets every running job do
// some work; the first job to reach its work finishes.
func apply(t *testing.T, s *model.State, ord engine.Order, now model.Time) {
	t.Helper()
	for _, j := range slices.Clone(s.Running()) {
		j.Done = j.DoneAt(now)
		j.EndPeriod(now, s.Cluster)
		if err := s.Stop(j); err != nil {
			t.Fatal(err)
		}
	}
	for i, j := range ord.Jobs {
		for tt := range s.Cluster.Types {
			if !ord.Types[i].Has(tt) {
				continue
			}
			var gpus []model.GPU
			for n, node := range s.Cluster.Nodes {
				for g := 0; g < node.GPUs && node.Type == tt && len(gpus) < j.Spec.GPUs; g++ {
					if s.FreeMask(n)&(1<<uint(g)) != 0 {
						gpus = append(gpus, model.GPU{Node: int32(n), Index: int32(g)})
					}
				}
			}
			if err := s.Start(j, gpus); err != nil {
				t.Fatal(err)
			}
			j.LastStart, j.Resume, j.Rate = now, now, s.Profile.Speed(j, tt, j.Spec.GPUs)
		}
	}
	if run := s.Running(); len(run) > 0 && now > 0 {
		j := run[0]
		j.EndPeriod(now, s.Cluster)
		j.Done = j.Work
		if err := s.End(j, model.Finished); err != nil {
			t.Fatal(err)
		}
	}
}

// chosenAfter sets the work of s's first waiting jobs to sizes, runs a's
// first round, ends those jobs as finished (a learns their sizes) and
// returns the pairs a's next round chooses, sorted.
func chosenAfter(t *testing.T, s *model.State, a *policy.Alloc, sizes ...float64) []string {
	t.Helper()
	w := s.Waiting()
	for i, work := range sizes {
		w[i].Work = work
	}
	a.Order(s, 0, nil)
	for _, j := range slices.Clone(w[:len(sizes)]) {
		if err := s.End(j, model.Finished); err != nil {
			t.Fatal(err)
		}
	}
	got := chosen(s, a.Order(s, 1, nil))
	slices.Sort(got)
	return got
}

// TestGittinsPicksTheBetterIndex: one GPU; three jobs of 100, 400 and 1600
// s finish, then x (nothing done) and y (400 s done) compete. Kaplan–Meier
// over the finished sizes and the two active jobs (censored at 0 and 400)
// gives S 1, 3/4, 1/2, 0; smoothed, S falls from 1 at 100 to 0 at 1600
// linearly in log-size, and the Gittins indexes are G(0) = ln 16 / 1500 ≈
// 0.00185 and G(400) = 0.5 / (1200/ln 16 − 200) ≈ 0.00215 (policy's
// TestGittinsIndex): y runs. Least-attained-service would run x.
func TestGittinsPicksTheBetterIndex(t *testing.T) {
	one := []float64{1}
	s := hetState(t, []string{"gpu"}, []float64{1}, []int{1},
		typed{"f1": one, "f2": one, "f3": one, "x": one, "y": one}, "f1", "f2", "f3", "x", "y")
	s.Waiting()[4].Done = 400
	a := &policy.Alloc{Objective: policy.Gittins, Round: 360 * model.Second}
	if got := chosenAfter(t, s, a, 100, 400, 1600); !slices.Equal(got, []string{"y:gpu"}) {
		t.Errorf("chosen %v, want [y:gpu]", got)
	}
	if a.Name() != "gittins" {
		t.Errorf("name %q", a.Name())
	}
}

// TestGangProbe: one type of 2 GPUs; jobs of 100, 400 and 1600 s finish,
// then a 2-GPU gang (nothing done) and two 1-GPU jobs a and b (450 s done
// each) compete under esrpt. Kaplan–Meier over the finished sizes and the
// three active jobs (censored at 0, 450, 450) gives P(S ≤ 100) = 0.2,
// P(S ≤ 400) = 0.4, P(S ≤ 1600) = 1; E[S] = 100 + 300·0.8 + 1200·0.6 =
// 1060 and E[S − 450 | S > 450] = 1150. The weights E[rem]^−2: the gang
// 1060^−2 = 8.9e−7 for 2 GPUs, a and b 1150^−2 = 7.6e−7 for one each: a
// and b run. With a probe at the 0.3 quantile (400 s) the gang, at 0 s,
// weighs twice as much (1.78e−6 > 2 × 7.6e−7) and runs; at the 0.5
// quantile (1600 s) too. Without a probe, or with the oracle (which reads
// 1000 s left for the gang, 950 s for a and b), it waits.
func TestGangProbe(t *testing.T) {
	for _, tc := range []struct {
		probe  float64
		oracle bool
		want   []string
	}{
		{0, false, []string{"a:gpu", "b:gpu"}},
		{0.3, false, []string{"gang:gpu"}},
		{0.5, false, []string{"gang:gpu"}},
		{0.3, true, []string{"a:gpu", "b:gpu"}},
	} {
		s := gangAndTwo(t, 0, 1000)
		a := &policy.Alloc{Objective: policy.EstSRPT, Oracle: tc.oracle, GangProbe: tc.probe, Round: 360 * model.Second}
		if got := chosenAfter(t, s, a, 100, 400, 1600); !slices.Equal(got, tc.want) {
			t.Errorf("probe %v oracle %v: chosen %v, want %v", tc.probe, tc.oracle, got, tc.want)
		}
	}
}

// gangAndTwo is the scenario of TestGangProbe and TestGangProbeLight: one
// type of 2 GPUs; f1, f2, f3 (to finish first, with chosenAfter), a 2-GPU
// gang with done of work seconds done, and 1-GPU jobs a and b (450 s done
// of 1400 each), all waiting.
func gangAndTwo(t *testing.T, done, work float64) *model.State {
	t.Helper()
	one := []float64{1}
	s := hetState(t, []string{"gpu"}, []float64{1}, []int{2},
		typed{"f1": one, "f2": one, "f3": one, "gang": one, "a": one, "b": one}, "f1", "f2", "f3", "gang", "a", "b")
	w := s.Waiting()
	w[3].Spec.GPUs, w[3].Spec.MinGPUs, w[3].Spec.MaxGPUs = 2, 2, 2
	w[3].Done, w[3].Work = done, work
	for _, j := range w[4:] {
		j.Done, j.Work = 450, 1400
	}
	return s
}
