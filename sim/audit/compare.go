package audit

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Tolerances of Compare: two times agree within an absolute 1 ms or a
// relative 1e-6; two fractions within a relative 1e-6 (or an absolute 1e-9
// near zero); counts must be equal.
const (
	relTol      = 1e-6
	absTolTime  = 1e-3
	absTolRatio = 1e-9
)

// kind says how a summary figure is compared.
type kind int

const (
	count    kind = iota // exact integer
	seconds              // time in seconds
	fraction             // ratio such as gpu_util
)

// figure is one key of the `--json` summary and the log's value for it.
type figure struct {
	key      string
	want     float64
	kind     kind
	required bool
}

// Compare checks that a summary — the `gpusched sim --json` object — agrees
// with r. It requires completed, avg_jct_s, makespan_s and gpu_util, and
// checks jobs, rejected, unfinished, preemptions, resizes, p50_jct_s, p99_jct_s and
// avg_queue_s when present; other keys are ignored. Counts must be equal;
// times agree within 1 ms or a relative 1e-6, fractions within a relative
// 1e-6. The error lists every disagreement.
func Compare(r Result, summaryJSON []byte) error {
	var s map[string]json.RawMessage
	if err := json.Unmarshal(summaryJSON, &s); err != nil {
		return fmt.Errorf("decode summary: %w", err)
	}
	figures := []figure{
		{"jobs", float64(r.Jobs), count, false},
		{"completed", float64(r.Completed), count, true},
		{"rejected", float64(r.Rejected), count, false},
		{"unfinished", float64(len(r.Unfinished)), count, false},
		{"avg_jct_s", r.AvgJCT, seconds, true},
		{"p50_jct_s", r.P50JCT, seconds, false},
		{"p99_jct_s", r.P99JCT, seconds, false},
		{"avg_queue_s", r.AvgQueue, seconds, false},
		{"makespan_s", r.Makespan, seconds, true},
		{"gpu_util", r.GPUUtil, fraction, true},
		{"preemptions", float64(r.Preemptions), count, false},
		{"resizes", float64(r.Resizes), count, false},
	}
	var bad []string
	for _, f := range figures {
		if msg := f.check(s); msg != "" {
			bad = append(bad, msg)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("summary disagrees with the event log: %s", strings.Join(bad, "; "))
	}
	return nil
}

// check returns a description of how the summary s disagrees with f, or "".
func (f figure) check(s map[string]json.RawMessage) string {
	raw, ok := s[f.key]
	if !ok {
		if f.required {
			return f.key + ": missing from summary"
		}
		return ""
	}
	var got float64
	if err := json.Unmarshal(raw, &got); err != nil || string(raw) == "null" {
		return fmt.Sprintf("%s: summary has %s, want a number", f.key, raw)
	}
	if !f.agrees(got) {
		return fmt.Sprintf("%s: summary %s, log %s", f.key, num(got), num(f.want))
	}
	return ""
}

// agrees reports whether got matches f.want within f's tolerance.
func (f figure) agrees(got float64) bool {
	d := math.Abs(got - f.want)
	switch f.kind {
	case count:
		return d == 0
	case seconds:
		return d <= absTolTime || d <= relTol*max(math.Abs(got), math.Abs(f.want))
	default:
		return d <= absTolRatio || d <= relTol*max(math.Abs(got), math.Abs(f.want))
	}
}

// num formats a figure for messages with 10 significant digits, enough to
// show any difference beyond the tolerances.
func num(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }
