package report

import (
	"bytes"
	"testing"

	"github.com/gpusched/gpusched/sim/metrics"
)

// sampleRecords is one job of each state, plus an id that needs quoting.
func sampleRecords() []metrics.JobRecord {
	return []metrics.JobRecord{
		{ID: "j1", Submit: 0, Start: 1500, Finish: 3_601_250, GPUs: 4, GPUType: "v100",
			Preemptions: 1, Resizes: 2, GPUTime: 14_399_000, EnergyKWh: 1.25},
		{ID: "j2", Submit: 30_000, Start: -1, Finish: -1, Rejected: true, Reason: "no GPU type can run it"},
		{ID: "j3", Submit: 60_001, Start: 70_000, Finish: -1, GPUs: 2, GPUType: "k80", Reason: "running, x"},
		{ID: `j,4 "x"`, Submit: 5000, Start: 5000, Finish: 5000, GPUs: 1, GPUType: "p100"},
	}
}

func TestJobsCSV(t *testing.T) {
	const header = "id,submit_s,start_s,finish_s,jct_s,queue_s,gpus,gpu_type,preemptions,resizes,state,energy_kwh,reason\n"
	withEnergy := sampleRecords()
	a, b := 0.1, 0.2
	withEnergy[2].EnergyKWh = a + b // not constant-folded: shortest exact form of a sum
	tests := []struct {
		name   string
		in     []metrics.JobRecord
		energy bool
		want   string
	}{
		{"empty", nil, true, header},
		{"states, no energy accounted", sampleRecords(), false, header +
			"j1,0,1.5,3601.25,3601.25,1.5,4,v100,1,2,finished,,\n" +
			"j2,30,,,,,,,0,0,rejected,,no GPU type can run it\n" +
			"j3,60.001,70,,,9.999,2,k80,0,0,unfinished,,\"running, x\"\n" +
			`"j,4 ""x""",5,5,5,0,0,1,p100,0,0,finished,,` + "\n"},
		{"states with energy", withEnergy, true, header +
			"j1,0,1.5,3601.25,3601.25,1.5,4,v100,1,2,finished,1.25,\n" +
			"j2,30,,,,,,,0,0,rejected,0,no GPU type can run it\n" +
			"j3,60.001,70,,,9.999,2,k80,0,0,unfinished,0.30000000000000004,\"running, x\"\n" +
			`"j,4 ""x""",5,5,5,0,0,1,p100,0,0,finished,0,` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := JobsCSV(&b, tt.in, tt.energy); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("JobsCSV:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestJobsCSVDeterministic(t *testing.T) {
	recs := benchRecords(2000)
	var a, b bytes.Buffer
	if err := JobsCSV(&a, recs, true); err != nil {
		t.Fatal(err)
	}
	if err := JobsCSV(&b, recs, true); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two writes of the same records differ")
	}
}
