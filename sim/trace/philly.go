package trace

import (
	"bytes"
	"cmp"
	"io"
	"slices"
	"time"

	"github.com/gpusched/gpusched/core/model"
)

// Philly's columns, in order.
const (
	phillyTimestamp = iota
	phillyDuration
	phillyGPUs
	phillyGPUTime
	phillyCluster
	phillyColumns
)

// phillyTimeLayout is the timestamp layout, for messages.
const phillyTimeLayout = "YYYY-MM-DD HH:MM:SS"

// phillyRow is one parsed Philly line, kept small: the specs are built once,
// already in order, after all lines are read.
type phillyRow struct {
	submit, duration model.Time
	gpus             int
	index, line      int
	vc               string // the virtual cluster (the cluster column)
}

// readPhilly reads a Philly CSV (header phillyHeader). Submit times are made
// relative to the earliest timestamp of the trace.
func readPhilly(r io.Reader, name string) ([]model.JobSpec, error) {
	var rows []phillyRow
	err := readRows(r, name, phillyHeader, ',', phillyColumns, func(l *lines, cols [][]byte) error {
		row, err := phillyLine(l, cols)
		if err != nil {
			return err
		}
		row.index, row.line = len(rows), l.n
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	jobs, lines := phillySpecs(rows)
	return finish(name, jobs, lines)
}

// phillySpecs sorts the rows by submission (ties in file order) and returns
// their specs, with Submit relative to the first one, and their lines.
func phillySpecs(rows []phillyRow) ([]model.JobSpec, []int) {
	slices.SortFunc(rows, func(a, b phillyRow) int {
		if c := cmp.Compare(a.submit, b.submit); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index)
	})
	ids := indexIDs(len(rows))
	jobs := make([]model.JobSpec, len(rows))
	lines := make([]int, len(rows))
	for i, row := range rows {
		jobs[i] = model.JobSpec{
			ID:       ids[row.index],
			Submit:   row.submit - rows[0].submit,
			GPUs:     row.gpus,
			MinGPUs:  row.gpus,
			MaxGPUs:  row.gpus,
			Duration: row.duration,
			Group:    row.vc,
		}
		lines[i] = row.line
	}
	return jobs, lines
}

// phillyLine converts the columns of one Philly line; submit is the absolute
// timestamp (milliseconds since the Unix epoch) until phillySpecs rebases it.
// gpu_time is checked but not used; cluster is free text, the job's
// virtual cluster (model.JobSpec.Group).
func phillyLine(l *lines, cols [][]byte) (phillyRow, error) {
	var row phillyRow
	var err error
	if row.submit, err = l.timestamp("timestamp", cols[phillyTimestamp]); err != nil {
		return row, err
	}
	if row.duration, err = l.seconds("duration", cols[phillyDuration]); err != nil {
		return row, err
	}
	row.duration = atLeastOneMilli(row.duration)
	if row.gpus, err = l.gpus("num_gpus", cols[phillyGPUs]); err != nil {
		return row, err
	}
	_, err = l.number("gpu_time", cols[phillyGPUTime], 0, maxSeconds*maxGPUs)
	row.vc = l.intern(bytes.TrimSpace(cols[phillyCluster]))
	return row, err
}

// timestamp parses column col as "YYYY-MM-DD HH:MM:SS" in UTC and returns it
// as milliseconds since the Unix epoch. It parses by hand: this is the hot
// path of an 80,000-line trace.
func (l *lines) timestamp(col string, b []byte) (model.Time, error) {
	b = bytes.TrimSpace(b)
	bad := func() (model.Time, error) {
		return 0, l.fail("%s %s is not a time %s", col, quote(b), phillyTimeLayout)
	}
	if len(b) != len(phillyTimeLayout) || b[4] != '-' || b[7] != '-' || b[10] != ' ' || b[13] != ':' || b[16] != ':' {
		return bad()
	}
	var v [6]int
	for i, at := range [6]int{0, 5, 8, 11, 14, 17} {
		n := 2
		if i == 0 {
			n = 4
		}
		for _, c := range b[at : at+n] {
			if c < '0' || c > '9' {
				return bad()
			}
			v[i] = v[i]*10 + int(c-'0')
		}
	}
	year, month, day, hour, minute, sec := v[0], time.Month(v[1]), v[2], v[3], v[4], v[5]
	t := time.Date(year, month, day, hour, minute, sec, 0, time.UTC)
	if t.Month() != month || t.Day() != day || t.Hour() != hour || t.Minute() != minute || t.Second() != sec {
		return bad()
	}
	return model.Time(t.Unix()) * model.Second, nil
}
