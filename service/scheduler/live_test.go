package scheduler

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/calibrate"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/settings"
)

// rampWatts is a 20-GPU node's known curve: energy per busy GPU 300·(1 +
// 0.5·(0.3 − load)/load) below 0.3, 300 up to 0.75, rising by 60 % to
// full load.
func rampWatts(load float64) float64 {
	busy, e := load*20, 300.0
	switch {
	case load < 0.3:
		e *= 1 + 0.5*(0.3-load)/load
	case load > 0.75:
		e *= 1 + 0.6*(load-0.75)/0.25
	}
	return e * busy
}

// classOf returns the calibration entry of a class and type.
func classEntry(t *testing.T, cal api.Calibration, class, family string) api.ClassThresholds {
	t.Helper()
	for _, c := range cal.Classes {
		if c.Class == class && c.Family == family {
			return c
		}
	}
	t.Fatalf("no class %s, type %s in %+v", class, family, cal)
	return api.ClassThresholds{}
}

// TestLearnThresholds: a node's power readings down a load ramp (the
// readings' loads from full to one busy GPU, with a job on the node so
// that the samples belong to the default algorithm type) make its class
// learn thresholds — the fit of calibrate on the same rows, exactly —
// only once the ramp is complete; before, the catalog's defaults are used
// and the node says so. The learned thresholds survive a restart.
func TestLearnThresholds(t *testing.T) {
	h := newHarness(t, func(c *settings.Config) { c.Live.MinNewSamples = 5 })
	a := h.agent("n1", "v100", 20)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":20}`)
	x := *agenttest.FindReplica(a.waitWork("the job", agenttest.HasReplica(j.ID)), j.ID)
	def := classEntry(t, h.s.Energy().Calibration(), "v100x20", "default")
	if def.Source != api.ThresholdsCatalog {
		t.Fatalf("before any sample: %+v", def)
	}
	t0 := time.Now().Add(-time.Hour)
	var rows []calibrate.Sample
	for k := 20; k >= 1; k-- {
		load := float64(k) / 20
		a.statusPower(reading(t0.Add(time.Duration(20-k)*time.Second), load, rampWatts(load)), agenttest.Running(x))
		rows = append(rows, calibrate.Sample{Load: math.Round(load*1e4) / 1e4, PowerW: rampWatts(load), Throughput: load * 20})
		if k > 1 {
			if e := classEntry(t, h.s.Energy().Calibration(), "v100x20", "default"); e.Source != api.ThresholdsCatalog {
				t.Fatalf("learned before the ramp reached one busy GPU (load %v): %+v", load, e)
			}
		}
	}
	want, err := calibrate.FitResult(rows, calibrate.Options{Tolerance: power.FitTolerance})
	if err != nil {
		t.Fatal(err)
	}
	got := classEntry(t, h.s.Energy().Calibration(), "v100x20", "default")
	if got.Source != api.ThresholdsLearned || got.Th1 != want.Th1 || got.Th2 != want.Th2 || got.Samples != 20 || got.Rows != 20 {
		t.Fatalf("learned %+v, want %+v from 20 rows", got, want)
	}
	if math.Abs(got.Th1-0.3) > 0.05 || math.Abs(got.Th2-0.75) > 0.05 {
		t.Errorf("learned %.3f/%.3f, breakpoints 0.3/0.75", got.Th1, got.Th2)
	}
	n := h.node("n1")
	if n.Energy == nil || n.Energy.Class != "v100x20" || n.Energy.Thresholds[0].Source != api.ThresholdsLearned {
		t.Errorf("node view: %+v", n.Energy)
	}
	metrics := gather(t, h.s)
	for _, m := range []string{`gpusched_calibration_samples{class="v100x20",family="default"} 20`} {
		if !slices.Contains(metrics, m) {
			t.Errorf("metrics lack %s", m)
		}
	}
	h.restart()
	if e := classEntry(t, h.s.Energy().Calibration(), "v100x20", "default"); e.Source != api.ThresholdsLearned || e.Th1 != want.Th1 {
		t.Errorf("after a restart: %+v", e)
	}
}

// TestRecalibrateErrors: on demand, a class with too few samples keeps its
// thresholds and says why.
func TestRecalibrateErrors(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":4}`)
	x := *agenttest.FindReplica(a.waitWork("the job", agenttest.HasReplica(j.ID)), j.ID)
	a.statusPower(reading(time.Now().Add(-time.Minute), 1, 1500), agenttest.Running(x))
	e := classEntry(t, h.s.Energy().Recalibrate(), "v100x4", "default")
	if e.Source != api.ThresholdsCatalog || !strings.Contains(e.Error, "too few samples") || e.Rows != 1 {
		t.Errorf("recalibrated with one row: %+v", e)
	}
}

// contentionCluster is a cluster file of one 4-GPU node whose model has a
// rising region (contention), so that its default th2 is below 1.
func contentionCluster(t *testing.T) *config.File {
	t.Helper()
	f, err := config.DecodeFile("c.yaml", []byte("nodes:\n  - {name: n1, gpu_type: v100, gpus: 4, power: {contention_knee: 0.3, contention_slowdown: 0.6}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPausedJob: under the energy placer, with the cluster file's
// defaults for a node with contention, one-GPU jobs fill the node up to
// one GPU past th2 (the seed's claim into the next state); the next job is
// paused — state paused, its reason naming the node, one "paused" event,
// listed under ?state=paused and in the jobs gauge — and starts once a job
// ends.
func TestPausedJob(t *testing.T) {
	f := contentionCluster(t)
	h := newHarness(t, func(c *settings.Config) {
		c.Names.Placer = "energy"
		c.Live.Cluster, c.Live.ClusterName = f, "c.yaml"
	})
	a := h.agent("n1", "v100", 4)
	a.register()
	e := classEntry(t, h.s.Energy().Calibration(), "n1", "default")
	node := power.DefaultNode()
	node.Contention = power.Contention{Knee: 0.3, Slowdown: 0.6}
	gpu, _ := power.Lookup("v100")
	th, _, err := config.ModelThresholds(node, gpu, power.DefaultWorkload(), 4)
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != api.ThresholdsClusterFile || e.Th1 != th.Th1 || e.Th2 != th.Th2 || th.Th2 >= 0.75 {
		t.Fatalf("defaults %+v, want the model's %+v below 0.75", e, th)
	}
	fit := int(th.Th2*4+1e-9) + 1 // jobs until state 3
	var ids []string
	for range fit + 1 {
		ids = append(ids, h.submit(`{"command":["x"],"gpus":1}`).ID)
	}
	paused := ids[fit]
	h.waitState(paused, api.Paused)
	for _, id := range ids[:fit] {
		h.waitState(id, api.Running)
	}
	time.Sleep(100 * time.Millisecond) // several rounds
	j := h.job(paused)
	if j.Reason != "held back by the placer: best node n1 is in load state 3" {
		t.Errorf("reason %q", j.Reason)
	}
	if n := countEvents(j, "paused"); n != 1 {
		t.Errorf("%d paused events, want 1: %+v", n, j.Events)
	}
	if l := h.s.Jobs(api.Paused); len(l) != 1 || l[0].ID != paused {
		t.Errorf("Jobs(paused) = %+v", l)
	}
	if !slices.Contains(gather(t, h.s), `gpusched_jobs{state="paused"} 1`) {
		t.Error("the jobs gauge has no paused job")
	}
	w := a.waitWork("the running jobs", agenttest.HasReplica(ids[0]))
	h.cancel(ids[0])
	a.status(agenttest.Exited(*agenttest.FindReplica(w, ids[0]), 143))
	h.waitState(paused, api.Running)
}

func countEvents(j api.Job, kind string) int {
	n := 0
	for _, e := range j.Events {
		if e.Event == kind {
			n++
		}
	}
	return n
}

// TestDataEndpointProbes: a job's data endpoint is in the nodes' probe
// list; under the energy placer the job waits for the first measurements,
// then, when every probe fails, says that no node reaches it; once a probe
// succeeds it starts. The node shows its measured distance.
func TestDataEndpointProbes(t *testing.T) {
	h := newHarness(t, func(c *settings.Config) { c.Names.Placer = "energy" })
	a := h.agent("n1", "v100", 4)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":1,"data_endpoint":"nas:2049"}`)
	w := a.status()
	if !slices.Contains(w.Probes, "nas:2049") {
		t.Fatalf("probes %v", w.Probes)
	}
	h.waitJob(j.ID, "waiting for measurements", func(j api.Job) bool {
		return j.State == api.Queued && strings.Contains(j.Reason, "waiting for the nodes' first measurements of data endpoint nas:2049")
	})
	report := func(r api.ProbeResult) {
		t.Helper()
		if _, err := h.s.Status("n1", api.Status{Version: a.applied, Probes: []api.ProbeResult{r}}); err != nil {
			t.Fatal(err)
		}
	}
	report(api.ProbeResult{Endpoint: "nas:2049", At: time.Now(), Error: "connect: connection refused"})
	report(api.ProbeResult{Endpoint: "elsewhere:1", At: time.Now(), RTTMs: 1}) // not asked: ignored
	h.waitJob(j.ID, "the unreachable reason", func(j api.Job) bool {
		return strings.Contains(j.Reason, "data endpoint nas:2049 is unreachable from every node (connect: connection refused)")
	})
	for _, ms := range []float64{3, 1, 2} {
		report(api.ProbeResult{Endpoint: "nas:2049", At: time.Now(), RTTMs: ms})
	}
	h.waitState(j.ID, api.Running)
	rtts := h.node("n1").Energy.RTTs
	if len(rtts) != 1 || rtts[0].Storage != "nas:2049" || rtts[0].RTTMs != 2 || !rtts[0].Reachable || rtts[0].Samples != 3 {
		t.Errorf("RTTs %+v, want the median 2 ms of 3 samples", rtts)
	}
}

// TestModelledEnergy: a node without readings is accounted from its power
// model once it has been silent for powerMaxGap, from the time it became
// ready: node v100 × 4 with the catalog's figures and the default node
// power, one GPU busy: 200 + 4·45 + 255 = 635 W; the job's share is its
// GPU's 300 W plus a quarter of the base, 50 W.
func TestModelledEnergy(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	h := newHarness(t, func(c *settings.Config) { c.Clock, c.HeartbeatTimeout = clock.now, time.Hour })
	a := h.agent("n1", "v100", 4)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":1}`)
	a.waitWork("the job", agenttest.HasReplica(j.ID))
	h.s.Energy().Tick() // the node's account opens
	clock.add(3 * time.Minute)
	h.s.Energy().Tick()
	rep := h.s.Energy().Report()
	wantNode, wantJob := 635*180/3.6e6, 350*180/3.6e6
	if len(rep.Nodes) != 1 || math.Abs(rep.Nodes[0].KWh-wantNode) > 1e-9 || rep.Nodes[0].Measured ||
		math.Abs(rep.Nodes[0].ModelledKWh-wantNode) > 1e-9 {
		t.Errorf("nodes %+v, want %v kWh modelled", rep.Nodes, wantNode)
	}
	if len(rep.Jobs) != 1 || math.Abs(rep.Jobs[0].KWh-wantJob) > 1e-9 || rep.Jobs[0].Measured {
		t.Errorf("jobs %+v, want %v kWh modelled", rep.Jobs, wantJob)
	}
	if rep.States[1].State != "1" || math.Abs(rep.States[1].KWh-wantNode) > 1e-9 {
		t.Errorf("states %+v: the node is in load state 1", rep.States)
	}
	if len(rep.Users) != 1 || rep.Users[0].Jobs != 1 || math.Abs(rep.TotalKWh-wantNode) > 1e-9 || math.Abs(rep.IdleKWh-(wantNode-wantJob)) > 1e-9 {
		t.Errorf("report %+v", rep)
	}
	if !slices.Contains(gather(t, h.s), `gpusched_energy_joules_total{job="",node="n1"} 114300`) {
		t.Errorf("metrics lack the node's 114300 J")
	}
	// One node, one job: pack has no other choice, so the replay's figure
	// is the run's own under the model, and nothing is saved.
	if r := rep.Replay; r == nil || math.Abs(r.ModelKWh-wantNode) > 1e-9 || math.Abs(*rep.PackKWh-wantNode) > 1e-6 || math.Abs(r.SavedKWh) > 1e-6 {
		t.Errorf("replay %+v, pack %v (%s): want the run's %v kWh both ways", r, rep.PackKWh, rep.PackError, wantNode)
	}
}

// TestModelledShortJobs: a node whose status reports carry no power
// reading is modelled from its first second, so that two jobs that end
// long before powerMaxGap are accounted: on node v100 × 4 (default node
// power), one GPU busy for 3 s each, one after the other: 635 W while a job
// runs, the job's share 350 W, i.e. 350·3 J each; the node draws 380 W idle
// in between (200 + 4·45).
func TestModelledShortJobs(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	h := newHarness(t, func(c *settings.Config) { c.Clock, c.HeartbeatTimeout = clock.now, time.Hour })
	a := h.agent("n1", "v100", 4)
	a.register()
	a.status()
	var ids []string
	for range 2 {
		j := h.submit(`{"command":["x"],"gpus":1}`)
		w := a.waitWork("the job", agenttest.HasReplica(j.ID))
		x := *agenttest.FindReplica(w, j.ID)
		a.status(agenttest.Running(x))
		clock.add(3 * time.Second)
		a.status(agenttest.Exited(x, 0))
		h.waitState(j.ID, api.Succeeded)
		clock.add(time.Second)
		a.status()
		ids = append(ids, j.ID)
	}
	rep := h.s.Energy().Report()
	if len(rep.Jobs) != 2 {
		t.Fatalf("jobs %+v, want both", rep.Jobs)
	}
	for i, j := range rep.Jobs {
		if want := 350 * 3 / 3.6e6; j.ID != ids[i] || math.Abs(j.KWh-want) > 1e-9 || j.Measured {
			t.Errorf("job %+v, want %s with %v kWh modelled", j, ids[i], want)
		}
	}
	if want := (2*635*3 + 380*2) / 3.6e6; math.Abs(rep.TotalKWh-want) > 1e-9 || len(rep.Nodes) != 1 || rep.Nodes[0].Measured {
		t.Errorf("total %v kWh, nodes %+v; want %v kWh modelled", rep.TotalKWh, rep.Nodes, want)
	}
}

// TestReplayOtherTypes: as in TestModelledEnergy, one node and one job
// leave pack no choice, so the replay's figure is the run's own under the
// model, whatever the node's GPU type: the job's time on an H100 or a K80
// is not read as time on the reference V100 (which would make the H100's
// replay 4.3 times shorter and the K80's 3.6 times longer). A node of one
// GPU, busy: 200 + 700 W (H100), 200 + 150 W (K80) for 3 minutes.
func TestReplayOtherTypes(t *testing.T) {
	for _, tc := range []struct {
		typ   string
		watts float64
	}{{"h100", 900}, {"k80", 350}} {
		clock := &fakeClock{t: time.Now()}
		h := newHarness(t, func(c *settings.Config) { c.Clock, c.HeartbeatTimeout = clock.now, time.Hour })
		a := h.agent("n1", tc.typ, 1)
		a.register()
		j := h.submit(`{"command":["x"],"gpus":1}`)
		a.waitWork("the job", agenttest.HasReplica(j.ID))
		h.s.Energy().Tick()
		clock.add(3 * time.Minute)
		h.s.Energy().Tick()
		rep := h.s.Energy().Report()
		want := tc.watts * 180 / 3.6e6
		if r := rep.Replay; r == nil || math.Abs(r.ModelKWh-want) > 1e-9 || math.Abs(*rep.PackKWh-want) > 1e-6 || math.Abs(r.SavedKWh) > 1e-6 {
			t.Errorf("%s: replay %+v, pack %v (%s): want the run's %v kWh both ways", tc.typ, r, rep.PackKWh, rep.PackError, want)
		}
	}
}

// TestSuspendIdle: with SuspendIdle a node idle for SuspendAfter is a
// power-down candidate and the hook runs once for it, with its name; a
// job on it ends its idleness.
func TestSuspendIdle(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	out := filepath.Join(t.TempDir(), "hook")
	h := newHarness(t, func(c *settings.Config) {
		c.Clock, c.HeartbeatTimeout = clock.now, time.Hour
		c.Live.SuspendIdle, c.Live.SuspendAfter = true, time.Minute
		c.Live.SuspendHook = []string{"sh", "-c", `echo "$GPUSCHED_NODE $GPUSCHED_NODE_ADDR" >> ` + out}
	})
	a := h.agent("n1", "v100", 4)
	a.register()
	h.s.Energy().Tick()
	clock.add(2 * time.Minute)
	h.s.Energy().Tick()
	h.s.Energy().Tick()
	if e := h.node("n1").Energy; e == nil || !e.PowerDownCandidate || e.IdleSince == nil {
		t.Fatalf("node %+v: want a power-down candidate", e)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(out)
		if string(data) == "n1 n1.example\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hook output %q", data)
		}
		time.Sleep(10 * time.Millisecond)
	}
	j := h.submit(`{"command":["x"],"gpus":1}`)
	a.waitWork("the job", agenttest.HasReplica(j.ID))
	h.s.Energy().Tick()
	if e := h.node("n1").Energy; e.PowerDownCandidate || e.IdleSince != nil {
		t.Errorf("busy node: %+v", e)
	}
}

// TestEnergyReplay: the report's pack figure is the replay of the jobs
// that ran, on the ready nodes, and the replay's files reproduce it.
func TestEnergyReplay(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 4)
	a.register()
	if _, err := h.s.Energy().Replay(); err == nil {
		t.Error("a replay without jobs")
	}
	j := h.submit(`{"command":["x"],"gpus":2,"user":"ann"}`)
	x := *agenttest.FindReplica(a.waitWork("the job", agenttest.HasReplica(j.ID)), j.ID)
	a.statusPower(reading(time.Now().Add(-2*time.Second), 0.5, 900), agenttest.Running(x))
	time.Sleep(50 * time.Millisecond)
	a.statusPower(reading(time.Now(), 0.5, 900), agenttest.Running(x))
	h.cancel(j.ID)
	a.status(agenttest.Exited(x, 143))
	h.waitState(j.ID, api.Cancelled)
	rec, _ := h.stored(j.ID)
	if rec.Ran.GPUs != 2 || rec.Ran.Type != "v100" || rec.Ran.Seconds <= 0 {
		t.Fatalf("ran %+v", rec.Ran)
	}
	files, err := h.s.Energy().Replay()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(files.Trace, `"gpus":2,"duration_s":`) || !strings.Contains(files.Cluster, "name: n1") || files.Policy != "fifo" {
		t.Errorf("replay files %+v", files)
	}
	rep := h.s.Energy().Report()
	if rep.PackKWh == nil || *rep.PackKWh <= 0 || rep.Replay.Jobs != 1 || rep.Users[0].Name != "ann" || !rep.Jobs[0].Measured ||
		len(rep.Queues) != 1 || rep.Queues[0].Name != rep.Jobs[0].Queue || rep.Queues[0].Name == "" || rep.Queues[0].KWh != rep.Jobs[0].KWh {
		t.Errorf("report %+v (pack error %q)", rep, rep.PackError)
	}
}
