package sim_test

import (
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/policy"
	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/sim"
)

// runRounds simulates jobs on c with strict FIFO, rounds of round seconds,
// and returns each job's start and finish in seconds.
func runRounds(t *testing.T, c *model.Cluster, round float64, roundsOnly bool, jobs []model.JobSpec) (map[string]float64, map[string]float64) {
	t.Helper()
	m, err := profile.ParseMatrix("test", []byte(testMatrix))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := profile.NewTable(m, c, types["v100"])
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(policy.FIFO{}, placer.Pack{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(sim.Config{Engine: eng, Cluster: c, Workload: tab, Jobs: jobs,
		Round: model.FromSeconds(round), RoundsOnly: roundsOnly})
	if err != nil {
		t.Fatal(err)
	}
	start := map[string]float64{}
	for _, r := range res.Records {
		start[r.ID] = r.Start.Seconds()
	}
	return start, finishes(res)
}

func TestRoundsOnly(t *testing.T) {
	// Two V100s. A (50 s) and C (200 s) at 0, B (30 s) at 10.
	jobs := []model.JobSpec{makeJob("A", 0).dur(50).obj(), makeJob("C", 0).dur(200).obj(), makeJob("B", 10).dur(30).obj()}
	c := cluster(t, "v100", 2)
	// Event-driven: B starts when A finishes (50) and ends at 80.
	start, fin := runRounds(t, c, 100, false, jobs)
	if start["B"] != 50 || fin["B"] != 80 {
		t.Errorf("event-driven: B ran %v–%v, want 50–80", start["B"], fin["B"])
	}
	// Rounds only: A's GPU stays idle until the round at 100 (C still
	// runs), so B runs 100–130.
	start, fin = runRounds(t, c, 100, true, jobs)
	if start["B"] != 100 || fin["B"] != 130 || fin["C"] != 200 {
		t.Errorf("rounds only: B ran %v–%v, C finished %v; want 100–130, 200", start["B"], fin["B"], fin["C"])
	}
	// When the last running job ends before the round does, the next round
	// starts at once: on one V100, A ends at 50 and B (waiting since 10)
	// starts then, not at 100.
	start, fin = runRounds(t, cluster(t, "v100", 1), 100, true, jobs[:1:1])
	if fin["A"] != 50 {
		t.Fatalf("A finished at %v", fin["A"])
	}
	start, _ = runRounds(t, cluster(t, "v100", 1), 100, true, []model.JobSpec{jobs[0], jobs[2]})
	if start["B"] != 50 {
		t.Errorf("rounds only, idle cluster: B started at %v, want 50", start["B"])
	}
	// A job arriving while nothing runs starts at its arrival.
	start, _ = runRounds(t, cluster(t, "v100", 1), 100, true, []model.JobSpec{makeJob("A", 0).dur(10).obj(), makeJob("L", 37).dur(5).obj()})
	if start["L"] != 37 {
		t.Errorf("rounds only: L arriving at an idle cluster started at %v, want 37", start["L"])
	}
}

func TestRoundsOnlyWholeSteps(t *testing.T) {
	// Job type M runs at 2 steps/s on a V100. With rounds of 100.3 s a
	// round holds int(2 × 100.3) = 200 whole steps, 100 s: Gavel's round
	// ends then, and so does gpusched's with --rounds-only. X (1,000
	// steps) runs from 0 on one V100; Y (200 steps) arrives at 1 while the
	// other V100 is idle and waits for the round at 100, not 100.3.
	jobs := []model.JobSpec{makeJob("X", 0).steps("M", 1000).obj(), makeJob("Y", 1).steps("M", 200).obj()}
	start, fin := runRounds(t, cluster(t, "v100", 2), 100.3, true, jobs)
	if start["Y"] != 100 || fin["Y"] != 200 || fin["X"] != 500 {
		t.Errorf("Y ran %v–%v, X finished %v; want 100–200, 500", start["Y"], fin["Y"], fin["X"])
	}
}
