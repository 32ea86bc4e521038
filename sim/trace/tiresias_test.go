package trace

import (
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// tiresiasJobSpec is a Tiresias job as Read returns it.
func tiresiasJobSpec(id string, submit model.Time, gpus int, modelName string, dur model.Time) model.JobSpec {
	s := rigid(id, submit, gpus)
	s.Model, s.Duration = modelName, dur
	return s
}

func TestReadTiresias(t *testing.T) {
	const h = tiresiasHeader + "\n"
	runReadCases(t, "t.csv", "tiresias", []readCase{
		{name: "sorted, submit as given",
			in: h + "7,8,30,133,vgg11,147,23\n3,1,0,606,vgg19,164,30\n9,2,30.25,157,inception4,127.5,26\n",
			want: []model.JobSpec{
				tiresiasJobSpec("3", 0, 1, "vgg19", 164*model.Second),
				tiresiasJobSpec("7", 30*model.Second, 8, "vgg11", 147*model.Second),
				tiresiasJobSpec("9", 30250, 2, "inception4", 127500),
			}},
		{name: "zero duration becomes 1 ms", in: h + "a,1,5,0,vgg19,0,0\n",
			want: []model.JobSpec{tiresiasJobSpec("a", 5*model.Second, 1, "vgg19", 1)}},
		{name: "missing header", in: "0,1,0,606,vgg19,164,30\n", err: `t.csv:1: missing header: want "job_id,num_gpu,`},
		{name: "philly header", in: phillyHeader + "\n", err: "t.csv:1: missing header"},
		{name: "six columns", in: h + "0,1,0,606,vgg19,164\n", err: "t.csv:2: got 6 columns, want 7"},
		{name: "empty id", in: h + " ,1,0,606,vgg19,164,30\n", err: "t.csv:2: job_id is empty"},
		{name: "duplicate id", in: h + "0,1,0,606,vgg19,164,30\n1,1,0,606,vgg19,164,30\n0,1,9,606,vgg19,164,30\n",
			err: `t.csv:4: duplicate id "0" (first on line 2)`},
		{name: "zero gpus", in: h + "0,0,0,606,vgg19,164,30\n", err: "t.csv:2: num_gpu 0 is less than 1"},
		{name: "gpus text", in: h + "0,two,0,606,vgg19,164,30\n", err: `t.csv:2: num_gpu "two" is not an integer`},
		{name: "negative submit", in: h + "0,1,-3,606,vgg19,164,30\n", err: "t.csv:2: submit_time -3 is negative"},
		{name: "negative iterations", in: h + "0,1,0,-606,vgg19,164,30\n", err: "t.csv:2: iterations -606 is negative"},
		{name: "fractional iterations", in: h + "0,1,0,6.5,vgg19,164,30\n", err: `t.csv:2: iterations "6.5" is not an integer`},
		{name: "empty model", in: h + "0,1,0,606,,164,30\n", err: "t.csv:2: model_name is empty"},
		{name: "negative duration", in: h + "0,1,0,606,vgg19,-164,30\n", err: "t.csv:2: duration -164 is negative"},
		{name: "bad interval", in: h + "0,1,0,606,vgg19,164,x\n", err: `t.csv:2: interval "x" is not a number`},
		{name: "header only", in: h, err: "t.csv: no jobs in the trace"},
	})
}
