package replay

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/power"
)

func v100Node(name string) Node {
	g, _ := power.Lookup("v100")
	n := power.DefaultNode()
	n.Sleeps, n.Contention = false, power.Contention{Knee: 1} // as the service's classes without declared contention
	return Node{Name: name, GPUType: "v100", GPUs: 4, Power: n, GPU: g}
}

// TestEnergy: one 2-GPU job for an hour on a V100 node of 4 that stays on
// (200 W base, 45 W per idle GPU, 300 W per busy one): 200 + 2·45 +
// 2·300 = 890 W for 3,600 s, 0.89 kWh, all of it the job's (the simulator
// gives the static draw to the busy GPUs); a second node, idle, adds
// 380 W for the hour.
func TestEnergy(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	jobs := []Job{{ID: "j2", Submit: t0, GPUs: 2, GPUType: "v100", Seconds: 3600, User: "ann"},
		{ID: "j1", Submit: t0.Add(-time.Hour), GPUs: 1, GPUType: "v100", Seconds: 0}} // never ran: left out
	cluster, trace, err := Files([]Node{v100Node("n0"), v100Node("n1")}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(trace); got != `{"id":"j2","submit_s":0,"gpus":2,"duration_s":3600,"scaling":[[2,1]],"gpu_type":"v100","user":"ann"}`+"\n" {
		t.Errorf("trace %q", got)
	}
	for _, want := range []string{"name: n0", "base_w: 200", "sleeps: false", "contention_knee: 1", "max_w: 300"} {
		if !strings.Contains(string(cluster), want) {
			t.Errorf("cluster lacks %q:\n%s", want, cluster)
		}
	}
	res, err := Energy(cluster, trace, "fifo")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.JobsKWh-0.89) > 1e-9 || math.Abs(res.IdleKWh-0.38) > 1e-9 || math.Abs(res.TotalKWh-1.27) > 1e-9 {
		t.Errorf("energy %+v, want jobs 0.89, idle 0.38, total 1.27 kWh", res)
	}
	if got := Command("out", "fifo"); got != "gpusched sim --trace out/trace.jsonl --cluster out/cluster.yaml --policy fifo --placer pack --json" {
		t.Errorf("command %q", got)
	}
}

// TestEnergyOtherTypes: a job's time on its own type survives the replay
// on types other than the reference (V100, 15.7 TFLOPS). One K80 node
// (4.37 TFLOPS; 25 W idle, 150 W busy) and one H100 node (67 TFLOPS;
// 700 W busy), one GPU each, 200 W base each, one job an hour on each:
// the trace says 3,600 × 4.37/15.7 = 1,002.038 and 3,600 × 67/15.7 =
// 15,363.057 V100-seconds, and the replay runs each job its hour: (200 +
// 150) + (200 + 700) W for 3,600 s = 1.25 kWh, all of it the jobs'.
// Without the scaling the H100 job would take 843 s and the K80 job 3.6 h.
func TestEnergyOtherTypes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	node := func(name, typ string) Node {
		g, _ := power.Lookup(typ)
		n := power.DefaultNode()
		n.Sleeps, n.Contention = false, power.Contention{Knee: 1}
		return Node{Name: name, GPUType: typ, GPUs: 1, Power: n, GPU: g}
	}
	jobs := []Job{{ID: "j1", Submit: t0, GPUs: 1, GPUType: "k80", Seconds: 3600},
		{ID: "j2", Submit: t0, GPUs: 1, GPUType: "h100", Seconds: 3600}}
	cluster, trace, err := Files([]Node{node("k", "k80"), node("h", "h100")}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"j1","submit_s":0,"gpus":1,"duration_s":1002.038,"scaling":[[1,1]],"gpu_type":"k80"}` + "\n" +
		`{"id":"j2","submit_s":0,"gpus":1,"duration_s":15363.057,"scaling":[[1,1]],"gpu_type":"h100"}` + "\n"
	if got := string(trace); got != want {
		t.Errorf("trace %q, want %q", got, want)
	}
	res, err := Energy(cluster, trace, "fifo")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.TotalKWh-1.25) > 1e-6 || math.Abs(res.JobsKWh-1.25) > 1e-6 || math.Abs(res.IdleKWh) > 1e-6 {
		t.Errorf("energy %+v, want 1.25 kWh, all of it the jobs'", res)
	}
}

func TestFilesErrors(t *testing.T) {
	job := []Job{{ID: "j1", Submit: time.Now(), GPUs: 1, GPUType: "v100", Seconds: 1}}
	bare := v100Node("n0")
	bare.GPU = power.GPUPower{}
	for _, tc := range []struct {
		nodes []Node
		jobs  []Job
		err   string
	}{
		{nil, job, "no node to replay on"},
		{[]Node{bare}, job, `GPU type "v100" of node n0 has no power figures`},
		{[]Node{v100Node("n0")}, nil, "no job has run"},
	} {
		if _, _, err := Files(tc.nodes, tc.jobs); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("error %v, want %q", err, tc.err)
		}
	}
	if _, err := Energy([]byte("nodes: []"), nil, "fifo"); err == nil {
		t.Error("an empty cluster replays")
	}
}
