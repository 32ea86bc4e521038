package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// cycleGANStepMS is the step time of a CycleGAN job on one V100 in the
// embedded throughput matrix (4.426 steps/s): the queued jobs below are
// stand-ins that train at the speed the matrix gives their model, so the
// forecast knows their length from their total steps before they start.
const cycleGANStepMS = 226

// TestETAOnDev is issue 20's forecast check on `gpusched dev` with 4 GPUs:
// a 4-GPU job of 12 s (known length: total steps, speed measured from its progress
// reports) holds every GPU while 10 one-GPU CycleGAN jobs of known length
// (2–6 s each) queue behind it; once the running job's speed is measured,
// `gpusched jobs --eta` predicts every queued job's start. Each prediction
// must be within 10% of its lead time or 5 s of the actual start, and the
// P10–P90 range must contain the actual start for at least 8 of the 10.
// `gpusched eta --accuracy` then reports the same predictions.
func TestETAOnDev(t *testing.T) {
	url := startDev(t, "v100=4")
	root := t.TempDir()
	blocker := submitSteps(t, url, "blocker", 4, "", 60, 200, stateDir(t, root, "blocker"))
	waitState(t, url, blocker, 20*time.Second, api.Running)
	steps := []int{9, 18, 13, 22, 9, 27, 13, 18, 9, 22}
	var ids []string
	for i, n := range steps {
		ids = append(ids, submitSteps(t, url, fmt.Sprintf("q%d", i), 1, "CycleGAN", n, cycleGANStepMS, stateDir(t, root, fmt.Sprint("q", i))))
	}
	eventually(t, 20*time.Second, "the running job's speed measured", func() bool {
		var e api.ETA
		return json.Unmarshal([]byte(mustCLI(t, url, "eta", blocker, "-o", "json")), &e) == nil && e.Basis.Speed == "measured"
	})
	var listed []struct {
		api.Job
		ETA *api.ETA `json:"eta"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, url, "jobs", "--eta", "-o", "json")), &listed); err != nil {
		t.Fatal(err)
	}
	pred := map[string]api.ETA{}
	for _, j := range listed {
		if j.ETA != nil && j.State == api.Queued {
			pred[j.ID] = *j.ETA
		}
	}
	if len(pred) != len(ids) {
		t.Fatalf("forecasts of %d queued jobs, want %d: %+v", len(pred), len(ids), listed)
	}
	for _, id := range ids {
		waitState(t, url, id, 60*time.Second, api.Succeeded)
	}
	inRange := 0
	for _, id := range ids {
		j, e := job(t, url, id), pred[id]
		if e.PredictedStart == nil || e.StartP10 == nil || e.StartP90 == nil {
			t.Errorf("%s: no predicted start: %+v", id, e)
			continue
		}
		actual := *j.StartedAt
		lead, miss := actual.Sub(e.ForecastAt), actual.Sub(*e.PredictedStart)
		ok := !actual.Before(*e.StartP10) && !actual.After(*e.StartP90)
		if ok {
			inRange++
		}
		t.Logf("%s: predicted %s (P10 %s, P90 %s, basis %s), actual %s: error %+.2fs over a lead of %.1fs, in range %v",
			id, e.PredictedStart.Format("15:04:05.000"), e.StartP10.Format("15:04:05.000"), e.StartP90.Format("15:04:05.000"),
			e.Basis.Length+"/"+e.Basis.Speed, actual.Format("15:04:05.000"), miss.Seconds(), lead.Seconds(), ok)
		if miss.Abs() > 5*time.Second && miss.Abs() > lead/10 {
			t.Errorf("%s: predicted start off by %s (lead %s): want within 10%% or 5 s", id, miss, lead)
		}
	}
	if inRange < 8 {
		t.Errorf("the P10–P90 range holds the actual start for %d of %d jobs, want at least 8", inRange, len(ids))
	}
	var acc api.ETAAccuracy
	if err := json.Unmarshal([]byte(mustCLI(t, url, "eta", "--accuracy", "-o", "json")), &acc); err != nil {
		t.Fatal(err)
	}
	if acc.Jobs != len(ids) || acc.Predictions < len(ids) {
		t.Errorf("eta --accuracy counts %d jobs and %d predictions, want %d jobs", acc.Jobs, acc.Predictions, len(ids))
	}
	if out := mustCLI(t, url, "eta", "--accuracy"); !strings.Contains(out, "steps/matrix") {
		t.Errorf("eta --accuracy table:\n%s", out)
	}
}

// submitSteps submits a testdata/ckpt job of gpus GPUs that trains for
// steps steps of stepMS each, reporting its progress through its progress
// file, with its total steps (and model, when given) in the spec.
func submitSteps(t testing.TB, url, name string, gpus int, model string, steps, stepMS int, state string) string {
	t.Helper()
	args := []string{"submit", "--name", name, "--gpus", strconv.Itoa(gpus), "--total-steps", strconv.Itoa(steps)}
	if model != "" {
		args = append(args, "--model", model)
	}
	args = append(args, "--", ckptBinary(t), "--state", state, "--steps", strconv.Itoa(steps), "--step-ms", strconv.Itoa(stepMS))
	return strings.TrimSpace(mustCLI(t, url, args...))
}
