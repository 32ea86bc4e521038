package trace

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// gavelRow builds one Gavel line from its job type, total steps, scale
// factor, priority weight and arrival time; the other columns are fixed.
func gavelRow(jobType, steps, scale, weight, arrival string) string {
	return strings.Join([]string{jobType, "python3 main.py --data_dir=%s/cifar10", "image_classification/cifar10",
		"--num_steps", "1", steps, scale, weight, "-1.000000", arrival}, "\t") + "\n"
}

// gavelJobSpec is the spec that gavelRow gives for valid input.
func gavelJobSpec(id string, submit model.Time, gpus int, jobType string, steps int64, prio int) model.JobSpec {
	s := rigid(id, submit, gpus)
	s.Model, s.Steps, s.Priority = jobType, steps, prio
	return s
}

func TestReadGavel(t *testing.T) {
	const rn = "ResNet-18 (batch size 16)"
	const lm = "LM (batch size 80)"
	runReadCases(t, "g.trace", "gavel", []readCase{
		{name: "one job", in: gavelRow(rn, "1817", "1", "1", "0"),
			want: []model.JobSpec{gavelJobSpec("0", 0, 1, rn, 1817, 1)}},
		{name: "sorted by arrival, ids in file order",
			in: gavelRow(rn, "100", "2", "1", "60") + gavelRow(lm, "50", "4", "5", "0.5") + "\n" + gavelRow(rn, "7", "1", "2.9", "60"),
			want: []model.JobSpec{
				gavelJobSpec("1", 500, 4, lm, 50, 5),
				gavelJobSpec("0", 60*model.Second, 2, rn, 100, 1),
				gavelJobSpec("2", 60*model.Second, 1, rn, 7, 2),
			}},
		{name: "crlf", in: strings.ReplaceAll(gavelRow(rn, "3", "1", "1", "0"), "\n", "\r\n"),
			want: []model.JobSpec{gavelJobSpec("0", 0, 1, rn, 3, 1)}},
		{name: "weight below one", in: gavelRow(rn, "3", "1", "0.5", "0"),
			want: []model.JobSpec{gavelJobSpec("0", 0, 1, rn, 3, 0)}},
		{name: "too few columns", in: gavelRow(rn, "3", "1", "1", "0") + "a\tb\tc\n", err: "g.trace:2: got 3 columns, want 10"},
		{name: "too many columns", in: strings.TrimSuffix(gavelRow(rn, "3", "1", "1", "0"), "\n") + "\textra\n",
			err: "g.trace:1: got 11 columns, want 10"},
		{name: "csv line", in: "a,b,c\n", err: "g.trace:1: got 1 columns, want 10"},
		{name: "empty job type", in: gavelRow(" ", "3", "1", "1", "0"), err: "g.trace:1: job_type is empty"},
		{name: "steps not a number", in: gavelRow(rn, "many", "1", "1", "0"), err: `g.trace:1: total_steps "many" is not an integer`},
		{name: "fractional steps", in: gavelRow(rn, "1.5", "1", "1", "0"), err: `g.trace:1: total_steps "1.5" is not an integer`},
		{name: "zero steps", in: gavelRow(rn, "0", "1", "1", "0"), err: "g.trace:1: total_steps 0 is less than 1"},
		{name: "zero gpus", in: gavelRow(rn, "3", "0", "1", "0"), err: "g.trace:1: scale_factor 0 is less than 1"},
		{name: "negative gpus", in: gavelRow(rn, "3", "-2", "1", "0"), err: "g.trace:1: scale_factor -2 is less than 1"},
		{name: "huge gpus", in: gavelRow(rn, "3", "99999999", "1", "0"), err: "g.trace:1: scale_factor 99999999 is too large"},
		{name: "zero weight", in: gavelRow(rn, "3", "1", "0", "0"), err: "g.trace:1: priority_weight 0 is not positive"},
		{name: "negative weight", in: gavelRow(rn, "3", "1", "-1", "0"), err: "g.trace:1: priority_weight -1 is negative"},
		{name: "nan weight", in: gavelRow(rn, "3", "1", "NaN", "0"), err: `g.trace:1: priority_weight "NaN" is not a number`},
		{name: "negative arrival", in: gavelRow(rn, "3", "1", "1", "-5"), err: "g.trace:1: arrival_time -5 is negative"},
		{name: "inf arrival", in: gavelRow(rn, "3", "1", "1", "+Inf"), err: `g.trace:1: arrival_time "+Inf" is not a number`},
		{name: "huge arrival", in: gavelRow(rn, "3", "1", "1", "1e300"), err: "g.trace:1: arrival_time 1e+300 is too large"},
		{name: "bad slo", in: strings.Replace(gavelRow(rn, "3", "1", "1", "0"), "-1.000000", "none", 1),
			err: `g.trace:1: SLO "none" is not a number`},
		{name: "bad needs_data_dir", in: strings.Replace(gavelRow(rn, "3", "1", "1", "0"), "\t1\t3\t", "\t2\t3\t", 1),
			err: "g.trace:1: needs_data_dir 2 is too large (at most 1)"},
		{name: "empty", in: "", err: "g.trace: no jobs in the trace"},
	})
}
