package trace

import (
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

func TestReadJSONL(t *testing.T) {
	elastic := rigid("j1", 0, 4)
	elastic.MinGPUs, elastic.MaxGPUs = 2, 8
	elastic.Model, elastic.Steps = "ResNet-50 (batch size 64)", 10000
	timed := rigid("j2", 30*model.Second, 1)
	timed.Duration, timed.GPUType, timed.User = 3600*model.Second, "v100", "alice"
	full := rigid("j3", 1500, 2)
	full.Model, full.Duration, full.Priority, full.PeakMemMiB = "LM (batch size 80)", 1, -2, 12000
	scaled := rigid("s", 0, 2)
	scaled.MaxGPUs, scaled.ReplicaGPUs, scaled.Duration = 8, 2, 60*model.Second
	scaled.Scaling = []model.ScalePoint{{GPUs: 1, Rate: 1}, {GPUs: 2, Rate: 1.8}, {GPUs: 4, Rate: 3.1}}
	nullScaling := rigid("j3", 0, 1)
	nullScaling.Duration = model.Second
	const ok = `"submit_s":0,"gpus":1,"duration_s":1`
	runReadCases(t, "j.jsonl", "jsonl", []readCase{
		{name: "design examples",
			in: `{"id":"j1","submit_s":0,"gpus":4,"min_gpus":2,"max_gpus":8,"model":"ResNet-50 (batch size 64)","steps":10000,"priority":0}` + "\n" +
				`{"id":"j2","submit_s":30,"gpus":1,"duration_s":3600,"gpu_type":"v100","user":"alice"}` + "\n",
			want: []model.JobSpec{elastic, timed}},
		{name: "model with zero duration, all fields, blank lines",
			in: "\n  \n" + `{"id":"j3","submit_s":1.5,"gpus":2,"min_gpus":2,"max_gpus":2,"model":"LM (batch size 80)","duration_s":0,` +
				`"gpu_type":"","user":"","priority":-2,"peak_mem_mib":12000}` + "\r\n\n",
			want: []model.JobSpec{full}},
		{name: "scaling and replica_gpus",
			in:   `{"id":"s","submit_s":0,"gpus":2,"max_gpus":8,"replica_gpus":2,"duration_s":60,"scaling":[[1,1.0],[2,1.8],[4,3.1]]}` + "\n",
			want: []model.JobSpec{scaled}},
		{name: "replica resources",
			in:   `{"id":"r","submit_s":0,"gpus":2,"duration_s":60,"replica_cpu_milli":4000,"replica_mem_mib":16384}` + "\n",
			want: []model.JobSpec{{ID: "r", GPUs: 2, MinGPUs: 2, MaxGPUs: 2, Duration: 60000, Requests: model.Resources{model.ResourceCPU: 4000, model.ResourceMemory: 16384 << 20}}}},
		{name: "dataset and upload",
			in: `{"id":"d","submit_s":0,"gpus":1,"duration_s":60,"dataset_gb":1.2345,"upload":"lab-a"}` + "\n" +
				`{"id":"e","submit_s":0,"gpus":1,"duration_s":60,"dataset_gb":0}` + "\n",
			want: []model.JobSpec{{ID: "d", GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Duration: 60000, DatasetMB: 1235, Upload: "lab-a"},
				{ID: "e", GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Duration: 60000}}},
		{name: "negative dataset", in: `{"id":"a",` + ok + `,"dataset_gb":-1}` + "\n", err: "j.jsonl:1: dataset_gb -1 is negative"},
		{name: "huge dataset", in: `{"id":"a",` + ok + `,"dataset_gb":2e9}` + "\n", err: "j.jsonl:1: dataset_gb 2000000000 is too large (at most 1000000000)"},
		{name: "upload not a string", in: `{"id":"a",` + ok + `,"upload":1}` + "\n", err: `j.jsonl:1: field "upload": got JSON number, want string`},
		{name: "negative replica cpu", in: `{"id":"a",` + ok + `,"replica_cpu_milli":-1}` + "\n", err: "j.jsonl:1: replica_cpu_milli -1 is negative"},
		{name: "null scaling", in: `{"id":"j3",` + ok + `,"scaling":null}` + "\n", want: []model.JobSpec{nullScaling}},
		{name: "not json", in: "id=j1\n", err: "j.jsonl:1: not a JSON object"},
		{name: "array", in: "[1,2]\n", err: "j.jsonl:1: not a JSON object"},
		{name: "object over two lines", in: "{\"id\":\"a\",\n" + ok + "}\n", err: "j.jsonl:1: bad JSON: the object does not end on this line"},
		{name: "two objects", in: `{"id":"a",` + ok + `} {"id":"b"}` + "\n", err: "j.jsonl:1: more than one JSON value on the line"},
		{name: "syntax", in: `{"id":"a",` + ok + `,}` + "\n", err: "j.jsonl:1: bad JSON: "},
		{name: "unknown field", in: `{"id":"a",` + ok + `,"gpu":1}` + "\n", err: `j.jsonl:1: unknown field "gpu"`},
		{name: "wrong case", in: `{"ID":"a",` + ok + `}` + "\n", err: `j.jsonl:1: unknown field "ID"`},
		{name: "twice", in: `{"id":"a",` + ok + `,"id":"b"}` + "\n", err: `j.jsonl:1: field "id" given twice`},
		{name: "wrong type", in: `{"id":"a","submit_s":0,"gpus":"4","duration_s":1}` + "\n", err: `j.jsonl:1: field "gpus": got JSON string, want int`},
		{name: "fractional gpus", in: `{"id":"a","submit_s":0,"gpus":1.5,"duration_s":1}` + "\n", err: `j.jsonl:1: field "gpus": got JSON number 1.5, want int`},
		{name: "missing id", in: `{` + ok + `}` + "\n", err: "j.jsonl:1: missing id"},
		{name: "null id", in: `{"id":null,` + ok + `}` + "\n", err: "j.jsonl:1: missing id"},
		{name: "empty id", in: `{"id":" ",` + ok + `}` + "\n", err: "j.jsonl:1: id is empty"},
		{name: "duplicate id", in: `{"id":"a",` + ok + "}\n\n" + `{"id":"a",` + ok + "}\n", err: `j.jsonl:3: duplicate id "a" (first on line 1)`},
		{name: "missing submit", in: `{"id":"a","gpus":1,"duration_s":1}` + "\n", err: "j.jsonl:1: missing submit_s"},
		{name: "negative submit", in: `{"id":"a","submit_s":-1,"gpus":1,"duration_s":1}` + "\n", err: "j.jsonl:1: submit_s -1 is negative"},
		{name: "missing gpus", in: `{"id":"a","submit_s":0,"duration_s":1}` + "\n", err: "j.jsonl:1: missing gpus"},
		{name: "zero gpus", in: `{"id":"a","submit_s":0,"gpus":0,"duration_s":1}` + "\n", err: "j.jsonl:1: gpus 0 is less than 1"},
		{name: "min above gpus", in: `{"id":"a",` + ok + `,"min_gpus":2}` + "\n", err: "j.jsonl:1: min_gpus 2 is too large (at most 1) (gpus is 1)"},
		{name: "zero min", in: `{"id":"a",` + ok + `,"min_gpus":0}` + "\n", err: "j.jsonl:1: min_gpus 0 is less than 1"},
		{name: "max below gpus", in: `{"id":"a","submit_s":0,"gpus":4,"max_gpus":2,"duration_s":1}` + "\n", err: "j.jsonl:1: max_gpus 2 is less than 4"},
		{name: "steps without model", in: `{"id":"a","submit_s":0,"gpus":1,"steps":5}` + "\n", err: "j.jsonl:1: steps without model"},
		{name: "steps and duration", in: `{"id":"a",` + ok + `,"model":"m","steps":5}` + "\n", err: "j.jsonl:1: both steps and duration_s"},
		{name: "no work", in: `{"id":"a","submit_s":0,"gpus":1,"model":"m"}` + "\n", err: "j.jsonl:1: no work"},
		{name: "zero steps", in: `{"id":"a","submit_s":0,"gpus":1,"model":"m","steps":0}` + "\n", err: "j.jsonl:1: steps 0 is less than 1"},
		{name: "negative duration", in: `{"id":"a","submit_s":0,"gpus":1,"duration_s":-5}` + "\n", err: "j.jsonl:1: duration_s -5 is negative"},
		{name: "negative memory", in: `{"id":"a",` + ok + `,"peak_mem_mib":-1}` + "\n", err: "j.jsonl:1: peak_mem_mib -1 is negative"},
		{name: "scaling empty", in: `{"id":"a",` + ok + `,"scaling":[]}` + "\n", err: `j.jsonl:1: field "scaling": no points`},
		{name: "scaling not a list", in: `{"id":"a",` + ok + `,"scaling":5}` + "\n",
			err: `j.jsonl:1: field "scaling": got JSON number, want [[GPU count, rate], ...]`},
		{name: "scaling flat", in: `{"id":"a",` + ok + `,"scaling":[1,2]}` + "\n",
			err: `j.jsonl:1: field "scaling": got JSON number, want [[GPU count, rate], ...]`},
		{name: "scaling text", in: `{"id":"a",` + ok + `,"scaling":[[1,"x"]]}` + "\n",
			err: `j.jsonl:1: field "scaling": got JSON string, want [[GPU count, rate], ...]`},
		{name: "scaling single", in: `{"id":"a",` + ok + `,"scaling":[[1]]}` + "\n",
			err: `j.jsonl:1: field "scaling": point 1 is not a [GPU count, rate] pair of numbers`},
		{name: "scaling triple", in: `{"id":"a",` + ok + `,"scaling":[[1,2],[2,3,4]]}` + "\n",
			err: `j.jsonl:1: field "scaling": point 2 is not a [GPU count, rate] pair`},
		{name: "scaling null rate", in: `{"id":"a",` + ok + `,"scaling":[[1,null]]}` + "\n",
			err: `j.jsonl:1: field "scaling": point 1 is not a [GPU count, rate] pair`},
		{name: "scaling zero GPUs", in: `{"id":"a",` + ok + `,"scaling":[[0,1]]}` + "\n",
			err: `j.jsonl:1: field "scaling": point 1: GPU count 0 is less than 1`},
		{name: "scaling fractional GPUs", in: `{"id":"a",` + ok + `,"scaling":[[1,1],[1.5,1]]}` + "\n",
			err: `j.jsonl:1: field "scaling": point 2: GPU count 1.5 is not an integer`},
		{name: "scaling huge GPUs", in: `{"id":"a",` + ok + `,"scaling":[[1e300,1]]}` + "\n",
			err: `j.jsonl:1: field "scaling": point 1: GPU count 1e+300 is too large`},
		{name: "scaling not increasing", in: `{"id":"a",` + ok + `,"scaling":[[1,1],[4,2],[4,3]]}` + "\n",
			err: `j.jsonl:1: field "scaling": point 3: GPU count 4 does not exceed the previous 4`},
		{name: "scaling negative rate", in: `{"id":"a",` + ok + `,"scaling":[[1,-1]]}` + "\n",
			err: `j.jsonl:1: field "scaling": point 1: rate -1 is negative`},
		{name: "scaling infinite rate", in: `{"id":"a",` + ok + `,"scaling":[[1,1e400]]}` + "\n",
			err: `j.jsonl:1: field "scaling": got JSON number 1e400, want [[GPU count, rate], ...]`},
		{name: "scaling all zero", in: `{"id":"a",` + ok + `,"scaling":[[1,0],[2,0]]}` + "\n",
			err: `j.jsonl:1: field "scaling": every rate is 0`},
		{name: "scaling zero around gpus", in: `{"id":"a","submit_s":0,"gpus":2,"duration_s":1,"scaling":[[1,0],[4,1]]}` + "\n",
			err: `j.jsonl:1: field "scaling": rate 0 at or around gpus 2, where the job's duration is measured`},
		{name: "scaling with steps", in: `{"id":"a","submit_s":0,"gpus":1,"model":"m","steps":5,"scaling":[[1,1]]}` + "\n",
			err: `j.jsonl:1: field "scaling": only for jobs given by duration_s`},
		{name: "zero replica_gpus", in: `{"id":"a",` + ok + `,"replica_gpus":0}` + "\n", err: "j.jsonl:1: replica_gpus 0 is less than 1"},
		{name: "replica_gpus text", in: `{"id":"a",` + ok + `,"replica_gpus":"2"}` + "\n",
			err: `j.jsonl:1: field "replica_gpus": got JSON string, want int`},
		{name: "gpus not whole replicas", in: `{"id":"a","submit_s":0,"gpus":6,"replica_gpus":4,"duration_s":1}` + "\n",
			err: "j.jsonl:1: gpus 6 is not a multiple of replica_gpus 4"},
		{name: "min_gpus not whole replicas", in: `{"id":"a","submit_s":0,"gpus":4,"min_gpus":3,"replica_gpus":2,"duration_s":1}` + "\n",
			err: "j.jsonl:1: min_gpus 3 is not a multiple of replica_gpus 2"},
		{name: "max_gpus not whole replicas", in: `{"id":"a","submit_s":0,"gpus":4,"max_gpus":9,"replica_gpus":2,"duration_s":1}` + "\n",
			err: "j.jsonl:1: max_gpus 9 is not a multiple of replica_gpus 2"},
		{name: "huge submit", in: `{"id":"a","submit_s":1e300,"gpus":1,"duration_s":1}` + "\n", err: "j.jsonl:1: submit_s 1e+300 is too large"},
	})
}
