package placer_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
)

// enode is one node of an energy fixture: its GPU type ("a" or "b"), its
// GPUs, how many are busy (the lowest indices) and its latency to each
// storage device.
type enode struct {
	typ        string
	gpus, busy int
	lat        []float64
}

// energyFixture is a cluster of enodes with one threshold class, th, for
// every node and family, and, when the nodes give latencies, one storage
// device per latency with a single interface of latency ifLat[s].
type energyFixture struct {
	s     *model.State
	pool  *engine.Pool
	place *placer.Energy
}

// speeds: a job runs at speed[0] per GPU on type a and speed[1] on b.
type speeds [2]float64

func (v speeds) Speed(_ *model.Job, t, n int) float64 { return v[t] * float64(n) }

func newEnergy(t *testing.T, nodes []enode, th placer.LoadThresholds, ifLat []float64, v speeds) *energyFixture {
	t.Helper()
	return newEnergySleeps(t, nodes, nil, th, ifLat, v)
}

// newEnergySleeps is newEnergy with the nodes' power management
// (EnergyTable.Sleeps; nil: none).
func newEnergySleeps(t *testing.T, nodes []enode, sleeps []bool, th placer.LoadThresholds, ifLat []float64, v speeds) *energyFixture {
	t.Helper()
	types := []model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}, {Name: "b", MemMiB: 1, TFLOPS: 1}}
	var ns []model.Node
	for i, n := range nodes {
		ns = append(ns, model.Node{Name: fmt.Sprintf("n%d", i), Type: map[string]int{"a": 0, "b": 1}[n.typ], GPUs: n.gpus})
	}
	c, err := model.NewCluster(types, ns)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, v)
	for i, n := range nodes {
		if n.busy == 0 {
			continue
		}
		j := model.NewJob(model.JobSpec{ID: fmt.Sprintf("busy%d", i), GPUs: n.busy, MinGPUs: n.busy, MaxGPUs: n.busy}, i, -1, 1)
		s.Submit(j)
		var gpus []model.GPU
		for g := range n.busy {
			gpus = append(gpus, model.GPU{Node: int32(i), Index: int32(g)})
		}
		if err := s.Start(j, gpus); err != nil {
			t.Fatal(err)
		}
	}
	table := &placer.EnergyTable{Families: map[string]int{placer.DefaultFamily: 0}, Class: make([]int, len(nodes)),
		Th: [][]placer.LoadThresholds{{th}}, Sleeps: sleeps}
	var net *network.Network
	if len(ifLat) > 0 {
		var storage []network.Storage
		for k, l := range ifLat {
			storage = append(storage, network.Storage{Name: fmt.Sprintf("s%d", k),
				Interfaces: []network.Interface{{Name: "eth0", BandwidthGbps: 10, LatencyMs: l, Quality: 1}}})
		}
		links := make([][]network.Link, len(nodes))
		for i, n := range nodes {
			for _, l := range n.lat {
				links[i] = append(links[i], network.Link{LatencyMs: l, BandwidthGbps: 10})
			}
		}
		if net, err = network.New(storage, links, nil); err != nil {
			t.Fatal(err)
		}
	}
	e, err := placer.NewEnergy(c, table, net)
	if err != nil {
		t.Fatal(err)
	}
	p := engine.NewPool(c)
	p.Reset(s)
	return &energyFixture{s: s, pool: p, place: e}
}

// job places a new job of n GPUs in replicas of r and returns the GPU
// names (nil: not placed) and the pause reason.
func (f *energyFixture) job(t *testing.T, n, r int, types engine.TypeSet) ([]string, string) {
	t.Helper()
	j := model.NewJob(model.JobSpec{ID: "new", GPUs: n, MinGPUs: n, MaxGPUs: n, ReplicaGPUs: r}, 99, -1, 1)
	before := f.pool.FreeAll()
	pl := f.place.Place(f.s, f.pool, j, n, types)
	if f.pool.FreeAll() != before || !f.pool.AllFree(pl.GPUs) {
		t.Fatal("Place changed the pool")
	}
	if pl.GPUs != nil && (pl.Pause != "" || len(pl.GPUs) != n) {
		t.Fatalf("placement %v with pause %q, want %d GPUs", pl.GPUs, pl.Pause, n)
	}
	return names(f.pool, pl.GPUs), pl.Pause
}

// perNode counts GPUs per node name in a placement ("n0:3 n2:1").
func perNode(gpus []string) string {
	var out []string
	for _, g := range gpus {
		node, _, _ := strings.Cut(g, "/")
		if k := len(out); k > 0 && strings.HasPrefix(out[k-1], node+":") {
			var c int
			fmt.Sscanf(out[k-1][len(node)+1:], "%d", &c)
			out[k-1] = fmt.Sprintf("%s:%d", node, c+1)
			continue
		}
		out = append(out, node+":1")
	}
	return strings.Join(out, " ")
}

// th8 are thresholds that make the states of an 8-GPU node easy to read:
// ⌊0.45·8⌋ = 3 and ⌊0.8·8⌋ = 6, so 0–3 busy GPUs are state 1, 4–6 state 2,
// 7–8 state 3 (the threshold th1 falls inside the fourth GPU, th2 inside the
// seventh).
var th8 = placer.LoadThresholds{Th1: 0.45, Th2: 0.8}

func TestEnergySequence(t *testing.T) {
	a8 := func(busy int, lat ...float64) enode { return enode{"a", 8, busy, lat} }
	tests := []struct {
		name  string
		nodes []enode
		ifLat []float64
		n, r  int
		want  string // GPUs per node in claim order; "" = not placed
		pause string
	}{
		// Step 3, groups: n0 is in state 3 (7 busy), n1 in state 2 (5),
		// n2 in state 1 (2); all equally close: state 1 comes first.
		{"state 1 before 2 before 3", []enode{a8(7, 0.1), a8(5, 0.1), a8(2, 0.1)}, []float64{1}, 1, 1, "n2:1", ""},
		// Without a state-1 node, state 2 before state 3.
		{"state 2 before 3", []enode{a8(7, 0.1), a8(5, 0.2)}, []float64{1}, 1, 1, "n1:1", ""},
		// Step 4, order in a group: all in state 1, latencies 0.3, 0.1,
		// 0.2 ms: n1 (best score) first.
		{"in-group by score", []enode{a8(0, 0.3), a8(0, 0.1), a8(0, 0.2)}, []float64{1}, 1, 1, "n1:1", ""},
		// A better score does not beat a better state: n0 is closest but
		// in state 2.
		{"state before score", []enode{a8(4, 0.05), a8(0, 0.3)}, []float64{1}, 1, 1, "n1:1", ""},
		// Equal state and score: lowest index.
		{"ties by index", []enode{a8(1, 0.2), a8(0, 0.2)}, []float64{1}, 1, 1, "n0:1", ""},
		// Step 5, claims capped at the headroom, sequence rebuilt: n0 (1
		// busy, 0.1 ms) has headroom 3 − 1 = 2 and claims 2; at 3 busy it is
		// still in state 1 with headroom 0, so it claims the one GPU in
		// which th1 falls (rounding rule) and moves to state 2 (4 busy).
		// Rebuilt, n1 (state 1, 0.2 ms) leads: it claims 3 (headroom 3),
		// which covers the demand of 6. Pack would put all 6 on n0.
		{"claims capped, sequence rebuilt", []enode{a8(1, 0.1), a8(0, 0.2)}, []float64{1}, 6, 1, "n0:3 n1:3", ""},
		// Demand fully claimed across groups: 14 GPUs on n0 (0 busy,
		// 0.1 ms) and n1 (0 busy, 0.2 ms). n0 claims 3, then 1 (state 2);
		// n1 claims 3, then 1 (state 2); n0 claims 6−4 = 2, then 1 (state
		// 3); n1 likewise 2 + 1 (14 so far: 4+4+3+3 = 14).
		{"demand fully claimed", []enode{a8(0, 0.1), a8(0, 0.2)}, []float64{1}, 14, 1, "n0:7 n1:7", ""},
		// State 3 nodes claim up to full load in a placement that started
		// in state 1/2: 16 GPUs need both nodes whole.
		{"state 3 claims up to full", []enode{a8(0, 0.1), a8(0, 0.2)}, []float64{1}, 16, 1, "n0:8 n1:8", ""},
		// Claim 8: the best node (n1, 0.1 ms) is in state 3 and so is every
		// other: pause, naming it.
		{"pause when the best node is in state 3", []enode{a8(7, 0.2), a8(7, 0.1)}, []float64{1}, 1, 1, "", "best node n1 is in load state 3"},
		// Resume: once n0 falls back to state 2 (6 busy) the job runs there.
		{"resume when a node falls back", []enode{a8(6, 0.2), a8(7, 0.1)}, []float64{1}, 1, 1, "n0:1", ""},
		// Gang: 3 free GPUs cannot hold 4: no placement, and no pause.
		{"gang: all or nothing", []enode{a8(7, 0.1), a8(6, 0.2)}, []float64{1}, 4, 1, "", ""},
		// Replicas of 2: n0 has one free GPU and is left out; n1 (3 busy,
		// state 1, headroom 0) claims one replica, 2 GPUs.
		{"replica granularity", []enode{a8(7, 0.05), a8(3, 0.1), a8(2, 0.2)}, []float64{1}, 2, 2, "n1:2", ""},
		// Replicas of 2, 6 GPUs: n0 (0 busy) claims ⌊3/2⌋·2 = 2, still
		// state 1 (2 busy, headroom 1 → one replica) claims 2 more (state
		// 2), then n1 claims 2.
		{"replica headroom rounds down", []enode{a8(0, 0.1), a8(0, 0.2)}, []float64{1}, 6, 2, "n0:4 n1:2", ""},
		// No storage device: every node scores the same; index decides.
		{"no network", []enode{{"a", 8, 0, nil}, {"a", 8, 0, nil}}, nil, 1, 1, "n0:1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newEnergy(t, tc.nodes, th8, tc.ifLat, speeds{1, 1})
			got, pause := f.job(t, tc.n, tc.r, 1)
			if perNode(got) != tc.want || pause != tc.pause {
				t.Errorf("got %q (pause %q), want %q (pause %q); GPUs %v", perNode(got), pause, tc.want, tc.pause, got)
			}
		})
	}
}

func TestEnergyStorageAndTypes(t *testing.T) {
	tests := []struct {
		name  string
		nodes []enode
		ifLat []float64
		v     speeds
		types engine.TypeSet
		want  string
		pause string
		n     int // GPUs
	}{
		// Two storage devices; s1's interface (0.5 ms) is faster than
		// s0's (2 ms), so the data lives on s1 and scores use latencies to
		// s1: n0 is 0.9 ms from it, n1 0.3 ms.
		{"scores from the upload's storage", []enode{{"a", 8, 0, []float64{0.1, 0.9}}, {"a", 8, 0, []float64{0.8, 0.3}}},
			[]float64{2, 0.5}, speeds{1, 1}, 1, "n1:1", "", 1},
		// The job runs fastest on b (speed 2): b's node, although a's is
		// closer.
		{"fastest type", []enode{{"a", 8, 0, []float64{0.1}}, {"b", 8, 0, []float64{0.5}}}, []float64{1}, speeds{1, 2}, 3, "n1:1", "", 1},
		// b's only node is in state 3: the job pauses rather than run on
		// the slower a, although a's node is in state 1.
		{"no fall back to a slower type", []enode{{"a", 8, 0, []float64{0.1}}, {"b", 8, 7, []float64{0.5}}},
			[]float64{1}, speeds{1, 2}, 3, "", "best node n1 is in load state 3", 1},
		// b has too few free GPUs for 2: the next type, a, is used.
		{"slower type when the fastest is full", []enode{{"a", 8, 0, []float64{0.1}}, {"b", 8, 7, []float64{0.5}}},
			[]float64{1}, speeds{1, 2}, 3, "n0:2", "", 2},
		// Types outside the feasible set are never used.
		{"infeasible type skipped", []enode{{"a", 8, 0, []float64{0.1}}, {"b", 8, 0, []float64{0.05}}}, []float64{1}, speeds{1, 2}, 1, "n0:1", "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newEnergy(t, tc.nodes, th8, tc.ifLat, tc.v)
			got, pause := f.job(t, tc.n, 1, tc.types)
			if perNode(got) != tc.want || pause != tc.pause {
				t.Errorf("got %q (pause %q), want %q (pause %q)", perNode(got), pause, tc.want, tc.pause)
			}
		})
	}
}

func TestEnergyPerFamilyThresholds(t *testing.T) {
	// The table's column for family "BERT" has th1 0.125 (⌊0.125·8⌋ = 1
	// GPU), the default column th1 0.45 (3 GPUs). A job of 3 GPUs on two
	// empty, equally close nodes:
	//  - BERT: n0 claims 1 (headroom 1), is still in state 1 with headroom
	//    0 and claims the crossing GPU (2 busy, state 2); n1, now first,
	//    claims the last one.
	//  - any other family (default column): n0 claims all 3 (headroom 3).
	c, err := model.NewCluster([]model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}},
		[]model.Node{{Name: "n0", Type: 0, GPUs: 8}, {Name: "n1", Type: 0, GPUs: 8}})
	if err != nil {
		t.Fatal(err)
	}
	table := &placer.EnergyTable{Families: map[string]int{placer.DefaultFamily: 0, "BERT": 1}, Class: []int{0, 0},
		Th: [][]placer.LoadThresholds{{th8, {Th1: 0.125, Th2: 0.8}}}}
	e, err := placer.NewEnergy(c, table, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := model.NewState(c, speeds{1, 1})
	p := engine.NewPool(c)
	p.Reset(s)
	for _, tc := range []struct{ model, want string }{
		{"BERT (batch size 16)", "n0:2 n1:1"},
		{"ResNet-50 (batch size 64)", "n0:3"},
		{"", "n0:3"},
	} {
		j := model.NewJob(model.JobSpec{ID: "x", GPUs: 3, MinGPUs: 3, MaxGPUs: 3, Model: tc.model}, 1, -1, 1)
		if got := perNode(names(p, e.Place(s, p, j, 3, 1).GPUs)); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.model, got, tc.want)
		}
	}
}

func TestFamily(t *testing.T) {
	for in, want := range map[string]string{
		"ResNet-50 (batch size 64)": "ResNet-50", "Transformer (batch size 128)": "Transformer",
		"": placer.DefaultFamily, "vgg19": "vgg19", " (batch size 3)": placer.DefaultFamily,
	} {
		if got := placer.Family(in); got != want {
			t.Errorf("Family(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoadThresholdsState(t *testing.T) {
	th := placer.LoadThresholds{Th1: 0.5, Th2: 0.75}
	// 0.5·8 = 4 and 0.75·8 = 6 lie on GPU boundaries: 4 busy is state 1,
	// 6 busy state 2 (load ≤ th), despite floating-point rounding.
	for busy, want := range []int{1, 1, 1, 1, 1, 2, 2, 3, 3} {
		if got := th.State(busy, 8); got != want {
			t.Errorf("State(%d, 8) = %d, want %d", busy, got, want)
		}
	}
	if got := (placer.LoadThresholds{Th1: 0.7, Th2: 0.7}).State(7, 10); got != 1 {
		t.Errorf("0.7·10: State = %d, want 1", got)
	}
}

func TestEnergyTableValidate(t *testing.T) {
	c, err := model.NewCluster([]model.GPUType{{Name: "a", MemMiB: 1, TFLOPS: 1}}, []model.Node{{Name: "n0", Type: 0, GPUs: 8}})
	if err != nil {
		t.Fatal(err)
	}
	ok := [][]placer.LoadThresholds{{th8}}
	for _, tc := range []struct {
		table *placer.EnergyTable
		err   string
	}{
		{&placer.EnergyTable{Class: []int{0}, Th: ok}, ""},
		{&placer.EnergyTable{Class: []int{}, Th: ok}, "0 node classes for 1 nodes"},
		{&placer.EnergyTable{Class: []int{1}, Th: ok}, "node n0 has class 1 of 1"},
		{&placer.EnergyTable{Class: []int{0}, Th: ok, Families: map[string]int{"x": 1}}, "class 0 has 1 columns, want 2"},
		{&placer.EnergyTable{Class: []int{0}, Th: [][]placer.LoadThresholds{{{Th1: 0.9, Th2: 0.5}}}}, "want 0 ≤ th1 ≤ th2 ≤ 1"},
		{&placer.EnergyTable{Class: []int{0}, Th: ok, Sleeps: []bool{true}}, ""},
		{&placer.EnergyTable{Class: []int{0}, Th: ok, Sleeps: []bool{true, false}}, "sleep flags for 2 nodes, the cluster has 1"},
	} {
		_, err := placer.NewEnergy(c, tc.table, nil)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%+v: error %v, want %q", tc.table, err, tc.err)
		}
	}
	if _, err := placer.NewEnergy(c, nil, nil); err == nil {
		t.Error("nil table accepted")
	}
}

func TestEnergyDeterministic(t *testing.T) {
	// The same state gives the same placement, call after call and placer
	// after placer (the scratch buffers carry nothing over).
	nodes := []enode{}
	for i := range 40 {
		nodes = append(nodes, enode{"a", 8, (i * 7) % 9, []float64{float64((i*13)%5) / 10}})
	}
	var first []string
	for k := range 3 {
		f := newEnergy(t, nodes, th8, []float64{1}, speeds{1, 1})
		for range 3 {
			got, _ := f.job(t, 24, 1, 1)
			if k == 0 && first == nil {
				first = got
			}
			if !slices.Equal(got, first) {
				t.Fatalf("placement %v, then %v", first, got)
			}
		}
	}
}

func TestEnergyName(t *testing.T) {
	if got := (&placer.Energy{}).Name(); got != "energy" {
		t.Errorf("Name() = %q", got)
	}
}

func TestEnergyPauseEndsWhenThePoolChanges(t *testing.T) {
	// Both nodes in state 3: paused, twice (the second answer comes from
	// the placer's memo). The pool then gives back 2 GPUs of n1 (a job's
	// GPUs freed this round): n1 falls to state 2 (5 busy) and the job
	// runs there.
	f := newEnergy(t, []enode{{"a", 8, 7, []float64{0.1}}, {"a", 8, 7, []float64{0.2}}}, th8, []float64{1}, speeds{1, 1})
	for range 2 {
		if got, pause := f.job(t, 1, 1, 1); got != nil || pause != "best node n0 is in load state 3" {
			t.Fatalf("got %v, pause %q", got, pause)
		}
	}
	f.pool.Give([]model.GPU{{Node: 1, Index: 0}, {Node: 1, Index: 1}})
	if got, pause := f.job(t, 1, 1, 1); perNode(got) != "n1:1" || pause != "" {
		t.Errorf("after n1 fell back: got %v, pause %q; want one GPU of n1", got, pause)
	}
}

// TestEnergySleepingNodes: an idle power-managed node comes after the nodes
// that are on in load states 1 and 2 and before those in state 3, ordered
// among its kind by score; once it claims it is on, in its load state.
func TestEnergySleepingNodes(t *testing.T) {
	a8 := func(busy int, lat float64) enode { return enode{"a", 8, busy, []float64{lat}} }
	all := func(n int) []bool { return slices.Repeat([]bool{true}, n) }
	tests := []struct {
		name   string
		nodes  []enode
		sleeps []bool
		n      int
		want   string
		pause  string
	}{
		// The seed alone would take n0 (state 1): asleep, it comes after
		// n1, which is on in state 2 (5 busy).
		{"on in state 2 before asleep", []enode{a8(0, 0.1), a8(5, 0.1)}, all(2), 1, "n1:1", ""},
		// A better score does not wake a node: n1 is on in state 1.
		{"on in state 1 before a closer sleeper", []enode{a8(0, 0.05), a8(2, 0.3)}, all(2), 1, "n1:1", ""},
		// Only idle nodes that sleep move: n0 is idle but stays on.
		{"an idle node that stays on keeps state 1", []enode{a8(0, 0.1), a8(5, 0.1)}, []bool{false, true}, 1, "n0:1", ""},
		// Without power management, the seed's order.
		{"no power management", []enode{a8(0, 0.1), a8(5, 0.1)}, nil, 1, "n0:1", ""},
		// Every node that is on is in state 3: wake one rather than pause.
		{"asleep before state 3, no pause", []enode{a8(7, 0.1), a8(0, 0.2)}, all(2), 1, "n1:1", ""},
		// Among sleepers, by score: n1 (0.1 ms).
		{"sleepers by score", []enode{a8(0, 0.3), a8(0, 0.1), a8(7, 0.05)}, all(3), 1, "n1:1", ""},
		// 6 GPUs: n0 (6 busy, state 2 at its limit) claims one (to state
		// 3); n1 wakes (asleep, index before n2) and claims 3 (state 1
		// headroom), 1 (into state 2) and the last 1 (headroom 2): a woken
		// node fills its efficient region before another is woken.
		{"woken node fills first", []enode{a8(6, 0.1), a8(0, 0.1), a8(0, 0.1)}, all(3), 6, "n0:1 n1:5", ""},
		// Issue 28, eighth session (claimAwake): 3 GPUs. In the order
		// above n0 (6 busy, state 2) claims 1 (to state 3) and n1 wakes for
		// the other 2: n1 wakes all the same, so the split over n0 spares
		// nothing. Claimed again with n1 in its load state (idle: state 1,
		// before n0), n1 takes all 3 (headroom 3): one node, not two.
		{"a node woken anyway takes the whole job", []enode{a8(6, 0.1), a8(0, 0.1)}, all(2), 3, "n1:3", ""},
		// The same with 5 GPUs: again n1 claims 3 (to state 2), then n0
		// (state 2, by index) 1 and n1 the last: two nodes either way, so
		// the first claim stands (n0 first, as the sequence put it).
		{"no fewer nodes: the first claim", []enode{a8(6, 0.1), a8(0, 0.1)}, all(2), 5, "n0:1 n1:4", ""},
		// The nodes that are on hold the job (n0 and n2, 2 free GPUs in
		// all): the split spares n1's wake-up and stands.
		{"a split that spares a wake-up", []enode{a8(6, 0.1), a8(0, 0.1), a8(6, 0.1)}, all(3), 2, "n0:1 n2:1", ""},
		// Nothing asleep and every node on in state 3: claim 8, pause.
		{"pause when no node sleeps", []enode{a8(7, 0.1), a8(7, 0.2)}, all(2), 1, "", "best node n0 is in load state 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newEnergySleeps(t, tc.nodes, tc.sleeps, th8, []float64{1}, speeds{1, 1})
			got, pause := f.job(t, tc.n, 1, 1)
			if perNode(got) != tc.want || pause != tc.pause {
				t.Errorf("got %q (pause %q), want %q (pause %q)", perNode(got), pause, tc.want, tc.pause)
			}
		})
	}
}

// TestEnergyNoSlowerTypeToSpareAWakeUp is issue 28's rule for sleeping
// nodes: a job never runs on a GPU type 1.5 times slower, or more, to
// spare a wake-up. The GPU type comes first (the fastest with room),
// sleeping or not; sleeping nodes only reorder the nodes of that type.
// Type a runs the job 1.5× (or 3×) as fast as type b; n0 (type a) is
// idle and asleep, n1 (type b) is on with 2 of its 8 GPUs busy.
func TestEnergyNoSlowerTypeToSpareAWakeUp(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    speeds
		want string
	}{
		{"1.5 times faster asleep", speeds{1.5, 1}, "n0:2"},
		{"3 times faster asleep", speeds{3, 1}, "n0:2"},
		// At equal speed the tie goes to the type declared first, asleep
		// or not (issue 28 left this alone: no slowdown is at stake).
		{"equal speed: the type declared first", speeds{1, 1}, "n0:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := []enode{{"a", 8, 0, []float64{0.1}}, {"b", 8, 2, []float64{0.1}}}
			f := newEnergySleeps(t, nodes, []bool{true, true}, th8, []float64{1}, tc.v)
			got, pause := f.job(t, 2, 1, 3)
			if perNode(got) != tc.want || pause != "" {
				t.Errorf("got %q (pause %q), want %q", perNode(got), pause, tc.want)
			}
		})
	}
}

// TestEnergyUpgrade: with Upgrades, a round moves a running job to a type
// on which it runs at least MinUpgrade times as fast (MinIdleUpgrade when
// none of the type's GPUs is busy) and that has room (a migration, which
// pays the restart pause), to the node seed 002's sequence puts first,
// also while a job waits that fits nowhere; never to a type less than
// that much faster, never without room, and never with Upgrades off. n0:
// type a, 8 GPUs, aBusy of them held by job busy0 (idle at 0); n1: type
// b, 8 GPUs, 2 of them held by job busy1.
func TestEnergyUpgrade(t *testing.T) {
	for _, tc := range []struct {
		name     string
		v        speeds
		aBusy    int
		upgrades bool
		waiting  bool
		want     string // busy1's new GPUs per node, "" for no move
	}{
		{"twice as fast: moves", speeds{2, 1}, 0, true, false, "n0:2"},
		{"1.5 times as fast: moves", speeds{1.5, 1}, 0, true, false, "n0:2"},
		// a is idle: MinIdleUpgrade (1.2) applies.
		{"1.4 times as fast onto an idle type: moves", speeds{1.4, 1}, 0, true, false, "n0:2"},
		{"1.2 times as fast onto an idle type: moves", speeds{1.2, 1}, 0, true, false, "n0:2"},
		{"1.1 times as fast onto an idle type: stays", speeds{1.1, 1}, 0, true, false, ""},
		// busy0 holds a GPU of a: MinUpgrade (1.5) applies.
		{"1.4 times as fast, a not idle: stays", speeds{1.4, 1}, 1, true, false, ""},
		{"1.5 times as fast, a not idle: moves", speeds{1.5, 1}, 1, true, false, "n0:2"},
		{"no room on the faster type: stays", speeds{2, 1}, 7, true, false, ""},
		// w fits nowhere (b has 6 free) and waits; a's free GPUs would
		// idle, so busy1 moves all the same (and leaves w 8 free of b).
		{"a job waits: moves all the same", speeds{2, 1}, 0, true, true, "n0:2"},
		{"upgrades off: stays", speeds{2, 1}, 0, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEnergySleeps(t, []enode{{"a", 8, tc.aBusy, nil}, {"b", 8, 2, nil}}, nil, th8, nil, tc.v)
			f.place.Upgrades = tc.upgrades
			if tc.waiting { // 7 GPUs of type b, which has 6 free: it waits
				f.s.Submit(model.NewJob(model.JobSpec{ID: "w", GPUs: 7, MinGPUs: 7, MaxGPUs: 7, GPUType: "b"}, 50, -1, 1))
			}
			e, err := engine.New(policy.FIFO{}, f.place, nil)
			if err != nil {
				t.Fatal(err)
			}
			plan := e.Schedule(f.s, 0)
			got := ""
			for _, m := range plan.Migrate {
				if m.Job.Spec.ID != "busy1" {
					t.Errorf("moved %s, want only busy1", m.Job.Spec.ID)
				}
				got = perNode(names(f.pool, m.GPUs))
			}
			if got != tc.want {
				t.Errorf("busy1 moved to %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEnergyYield: with Upgrades, a job at the head of a strict fifo queue
// that fits on no type makes a running job on a type it may use move to a
// type on which that job runs at least MinUpgrade times slower, when that
// type has room for it (the move an upgrade would undo), and starts in the
// same round. n0: type a, 8 GPUs, 6 of them held by busy0; n1: type b, 8
// GPUs, bBusy of them held by busy1. The head job w asks for 7 GPUs of type
// a (2 free): busy0 moves to n1 (6 free GPUs of b when bBusy is 2) and w
// takes 7 of n0's 8 GPUs. Never with Upgrades off, never to a type less
// than MinUpgrade times slower, never without room there, never with
// backfill (the job behind may start instead).
func TestEnergyYield(t *testing.T) {
	for _, tc := range []struct {
		name      string
		v         speeds
		bBusy     int
		upgrades  bool
		backfill  bool
		wantMove  string // the moves as "job>GPUs per node", "" for none
		wantStart string // w's GPUs per node, "" for not started
	}{
		{"twice as fast: busy0 yields, w starts", speeds{2, 1}, 2, true, false, "busy0>n1:6", "n0:7"},
		{"1.5 times as fast: busy0 yields", speeds{1.5, 1}, 2, true, false, "busy0>n1:6", "n0:7"},
		{"1.4 times as fast: w waits", speeds{1.4, 1}, 2, true, false, "", ""},
		{"no room on the slower type: w waits", speeds{2, 1}, 3, true, false, "", ""},
		{"upgrades off: w waits", speeds{2, 1}, 2, false, false, "", ""},
		// No yield; w waits, and busy1 (2 GPUs of b) upgrades to a's 2
		// free GPUs, which w cannot use.
		{"backfill: w waits", speeds{2, 1}, 2, true, true, "busy1>n0:2", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEnergySleeps(t, []enode{{"a", 8, 6, nil}, {"b", 8, tc.bBusy, nil}}, nil, th8, nil, tc.v)
			f.place.Upgrades = tc.upgrades
			f.s.Submit(model.NewJob(model.JobSpec{ID: "w", GPUs: 7, MinGPUs: 7, MaxGPUs: 7, GPUType: "a"}, 50, -1, 1))
			move, starts := f.scheduleOnce(t, policy.FIFO{Backfill: tc.backfill})
			start := starts["w"]
			if len(starts) > 1 || len(starts) == 1 && start == "" {
				t.Errorf("started %v, want only w", starts)
			}
			if move != tc.wantMove || start != tc.wantStart {
				t.Errorf("moves %q and w started on %q, want %q and %q", move, start, tc.wantMove, tc.wantStart)
			}
		})
	}
}

// TestEnergyYieldUndone: the yielding jobs move the cheapest first (the
// run time the move adds: remaining work at the speed of the type it goes
// to less that at its present speed; ties: the most recently started, then
// the later arrival) until the head job fits, and no move is
// made when all of them cannot make room. n0 and n1: type a, 8 GPUs, 4
// held by busy0 and 6 by busy1 (6 free); n2: type b, 8 GPUs, bBusy held
// by busy2; a runs every job twice as fast as b. The head job w asks for
// n GPUs of type a. busy0 and busy1 started at the same time, unless
// busy0Later: busy0 at 20, busy1 at 10.
func TestEnergyYieldUndone(t *testing.T) {
	for _, tc := range []struct {
		name         string
		bBusy, n     int
		busy0Later   bool
		move, wStart string // moves as "job>GPUs per node"; w's GPUs per node
	}{
		// busy1 (6 GPUs) goes to n2 first: 12 GPUs of a free, w takes 11
		// by seed 002's sequence (th8: state 1 up to 3 busy, 2 up to 6):
		// n1 (idle, state 1) claims 3, then 1 (state 2); n0 (4 busy, state
		// 2, lower index) 2, then 1 (state 3); n1 2, then 1; n0 1:
		// n1 7 and n0 4, n1 first.
		{"busy1 alone makes room", 0, 11, false, "busy1>n2:6", "n1:7 n0:4"},
		// n2 has 5 free: busy1 cannot move, busy0 (4) can, which leaves
		// 10 GPUs of a free, one short: no yield, w waits; after the walk
		// busy2 (3 GPUs of b) upgrades to a (twice as fast, 6 free; n0
		// first), as it does while a job waits that fits nowhere.
		{"the moves cannot make room: no yield", 3, 11, false, "busy2>n0:3", ""},
		// The same with w of 10 GPUs: busy0's move is enough.
		{"busy0 makes room when busy1 cannot", 3, 10, false, "busy0>n2:4", "n0:8 n1:2"},
		// w of 10 GPUs, n2 free: every job has work 1 left; busy1's move
		// adds 1/6 − 1/12 = 1/12 s (6 GPUs at speeds 1 and 2 per GPU),
		// busy0's 1/4 − 1/8 = 1/8 s: busy1 moves first and alone, w
		// takes the first 10 of the sequence above (n1 7, n0 3), also
		// when busy0 started later (before the cost order, busy0 moved
		// then: "busy0>n2:4", w on "n0:8 n1:2").
		{"busy1 makes room at equal start times", 0, 10, false, "busy1>n2:6", "n1:7 n0:3"},
		{"the cheaper busy1 goes first though busy0 started later", 0, 10, true, "busy1>n2:6", "n1:7 n0:3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEnergySleeps(t, []enode{{"a", 8, 4, nil}, {"a", 8, 6, nil}, {"b", 8, tc.bBusy, nil}}, nil, th8, nil, speeds{2, 1})
			f.place.Upgrades = true
			if tc.busy0Later {
				for _, r := range f.s.Running() {
					r.FirstStart = map[string]model.Time{"busy0": 20, "busy1": 10}[r.Spec.ID]
				}
			}
			f.s.Submit(model.NewJob(model.JobSpec{ID: "w", GPUs: tc.n, MinGPUs: tc.n, MaxGPUs: tc.n, GPUType: "a"}, 50, -1, 1))
			got, starts := f.scheduleOnce(t, policy.FIFO{})
			if start := starts["w"]; got != tc.move || start != tc.wStart {
				t.Errorf("moves %q and w on %q, want %q and %q", got, start, tc.move, tc.wStart)
			}
		})
	}
}

// TestEnergyYieldOnlyNeeded: a move that made room the head job's start
// does not need is undone; the job keeps its GPUs and pays no pause. n0:
// type a, 8 GPUs, all held by busy0; n1: type a, 8 GPUs, 5 held by busy1,
// which may run on a only (it cannot yield), and one by late, the last
// started (it yields first); n2: type b, 16 GPUs, free. a runs every job
// twice as fast as b. The head job w asks for 6 GPUs of a (2 free). late
// moves to n2 (n2's first GPU): 3 free, too few; busy0 moves to n2 (the
// next 8 GPUs; 16 GPUs at th8: ⌊0.45·16⌋ = 7, state 1 up to 7 busy, so
// n2 claims 6, then 1, then 1 in state 2): 11 free. Without late's move
// 10 of a would be free, enough: it is undone (the last move, busy0's,
// is needed: 3 free without it). w takes 6 by seed 002's sequence (th8):
// n0 (idle, state 1) claims 3, then 1 (3 busy is still state 1); n0 (4
// busy, state 2) and n1 (6 busy, state 2) tie on group, n0 first by
// index: 2 more. w: n0:6. Before the fix both moves were kept.
func TestEnergyYieldOnlyNeeded(t *testing.T) {
	f := newEnergySleeps(t, []enode{{"a", 8, 8, nil}, {"a", 8, 5, nil}, {"b", 16, 0, nil}}, nil, th8, nil, speeds{2, 1})
	f.place.Upgrades = true
	for _, r := range f.s.Running() {
		if r.Spec.ID == "busy1" {
			r.Spec.GPUType = "a"
		}
	}
	late := model.NewJob(model.JobSpec{ID: "late", GPUs: 1, MinGPUs: 1, MaxGPUs: 1}, 10, -1, 1)
	f.s.Submit(late)
	if err := f.s.Start(late, []model.GPU{{Node: 1, Index: 5}}); err != nil {
		t.Fatal(err)
	}
	f.s.Submit(model.NewJob(model.JobSpec{ID: "w", GPUs: 6, MinGPUs: 6, MaxGPUs: 6, GPUType: "a"}, 50, -1, 1))
	got, starts := f.scheduleOnce(t, policy.FIFO{})
	if got != "busy0>n2:8" || len(starts) != 1 || starts["w"] != "n0:6" {
		t.Errorf("moves %q and starts %v, want %q and w on %q", got, starts, "busy0>n2:8", "n0:6")
	}
}

// TestEnergyYieldWhole: with Upgrades, a job at the head of a strict fifo
// queue that would start below its requested size (and keep that size to
// its end, without a scaler) has running jobs yield, as for a job that fits
// nowhere, when the moves make room for the whole of it. n0: type a, 8
// GPUs, 4 held by busy0; n1: type b, 8 GPUs, bBusy held by busy1; a runs
// every job twice as fast as b. w asks for 8 GPUs, at least 4: no type has
// 8 free, a has 4, so without the rule it starts on n0:4. busy1 cannot
// yield (nothing is 1.5 times slower than b); busy0 moves to n1 when it has
// 4 free (th8: n1 at 3 busy is state 1 at its limit and claims 1, then 2
// in state 2, then 1: n1:4), and w takes all of n0 (3 in state 1, 1, 2 in
// state 2, 1, 1 in state 3: n0:8).
func TestEnergyYieldWhole(t *testing.T) {
	for _, tc := range []struct {
		name        string
		bBusy       int
		backfill    bool
		move, start string
	}{
		{"busy0 yields, w starts whole", 3, false, "busy0>n1:4", "n0:8"},
		{"no room for busy0 on b: w starts at its minimum", 5, false, "", "n0:4"},
		{"backfill: w starts at its minimum", 3, true, "", "n0:4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEnergySleeps(t, []enode{{"a", 8, 4, nil}, {"b", 8, tc.bBusy, nil}}, nil, th8, nil, speeds{2, 1})
			f.place.Upgrades = true
			f.s.Submit(model.NewJob(model.JobSpec{ID: "w", GPUs: 8, MinGPUs: 4, MaxGPUs: 8}, 50, -1, 1))
			got, starts := f.scheduleOnce(t, policy.FIFO{Backfill: tc.backfill})
			if start := starts["w"]; got != tc.move || start != tc.start {
				t.Errorf("moves %q and w on %q, want %q and %q", got, start, tc.move, tc.start)
			}
		})
	}
}

// scheduleOnce runs one round of an engine with pol and f's placer on f's
// state: the plan's migrations as "ID>nodes", comma-separated in the plan's
// order, and each started job's nodes by ID (perNode's form).
func (f *energyFixture) scheduleOnce(t *testing.T, pol policy.FIFO) (string, map[string]string) {
	t.Helper()
	e, err := engine.New(pol, f.place, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := e.Schedule(f.s, 0)
	var moves []string
	for _, m := range plan.Migrate {
		moves = append(moves, m.Job.Spec.ID+">"+perNode(names(f.pool, m.GPUs)))
	}
	starts := map[string]string{}
	for _, a := range plan.Start {
		starts[a.Job.Spec.ID] = perNode(names(f.pool, a.GPUs))
	}
	return strings.Join(moves, ","), starts
}
