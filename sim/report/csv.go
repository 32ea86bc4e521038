package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/gpusched/gpusched/sim/metrics"
)

// Job states in the state column of jobs.csv.
const (
	StateFinished   = "finished"
	StateRejected   = "rejected"
	StateUnfinished = "unfinished"
)

// jobsHeader is the header row of jobs.csv.
func jobsHeader() []string {
	return []string{"id", "submit_s", "start_s", "finish_s", "jct_s", "queue_s",
		"gpus", "gpu_type", "preemptions", "resizes", "state", "energy_kwh", "reason"}
}

// JobsCSV writes recs as CSV in the given order under the header
// id,submit_s,start_s,finish_s,jct_s,queue_s,gpus,gpu_type,preemptions,resizes,state,energy_kwh,reason.
// Cells that do not apply (the start of a job that never started, the finish
// of one that never finished) are empty; state is one of StateFinished,
// StateRejected and StateUnfinished. energy_kwh is the record's EnergyKWh in
// its shortest exact form when energy says the run accounted energy, else
// empty. reason is why a rejected job cannot run or an unfinished one is
// still waiting or running (JobRecord.Reason).
func JobsCSV(w io.Writer, recs []metrics.JobRecord, energy bool) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(jobsHeader()); err != nil {
		return fmt.Errorf("report: write jobs CSV: %w", err)
	}
	row := make([]string, len(jobsHeader()))
	for i := range recs {
		jobRow(row, &recs[i])
		row[11] = ""
		if energy {
			row[11] = strconv.FormatFloat(recs[i].EnergyKWh, 'f', -1, 64)
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("report: write jobs CSV: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: write jobs CSV: %w", err)
	}
	return nil
}

// jobRow fills row with the cells of r.
func jobRow(row []string, r *metrics.JobRecord) {
	started := r.Start >= 0
	row[0] = r.ID
	row[1] = r.Submit.SecondsString()
	row[2], row[5], row[6], row[7] = "", "", "", ""
	if started {
		row[2] = r.Start.SecondsString()
		row[5] = (r.Start - r.Submit).SecondsString()
		row[6] = strconv.Itoa(r.GPUs)
		row[7] = r.GPUType
	}
	row[3], row[4] = "", ""
	if r.Completed() {
		row[3] = r.Finish.SecondsString()
		row[4] = r.JCT().SecondsString()
	}
	row[8] = strconv.Itoa(r.Preemptions)
	row[9] = strconv.Itoa(r.Resizes)
	row[10] = jobState(r)
	row[12] = r.Reason
}

// jobState returns the state column for r; a rejected record is "rejected"
// whatever its other fields say.
func jobState(r *metrics.JobRecord) string {
	switch {
	case r.Rejected:
		return StateRejected
	case r.Completed():
		return StateFinished
	default:
		return StateUnfinished
	}
}
