package api_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/service/api"
)

func ptr[T any](v T) *T { return &v }

// specCase is one input of DecodeSpec or DecodeSpecYAML: either it decodes
// to want, or it fails naming field with a message containing msg.
type specCase struct {
	name, in   string
	want       *api.JobSpec
	field, msg string
}

func checkSpecCases(t *testing.T, decode func([]byte) (api.JobSpec, error), cases []specCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decode([]byte(tc.in))
			if tc.want != nil {
				if err != nil {
					t.Fatalf("decode %s: %v", tc.in, err)
				}
				if !reflect.DeepEqual(got, *tc.want) {
					t.Errorf("decode %s\n got  %+v\n want %+v", tc.in, got, *tc.want)
				}
				return
			}
			fe, ok := err.(*api.FieldError)
			if !ok {
				t.Fatalf("decode %s: error %#v, want a *api.FieldError", tc.in, err)
			}
			if fe.Field != tc.field || !strings.Contains(fe.Message, tc.msg) {
				t.Errorf("decode %s: error {%q, %q}, want field %q, message containing %q",
					tc.in, fe.Field, fe.Message, tc.field, tc.msg)
			}
			if !reflect.DeepEqual(got, api.JobSpec{}) {
				t.Errorf("decode %s: failed but returned %+v", tc.in, got)
			}
		})
	}
}

func TestDecodeSpec(t *testing.T) {
	const ok = `"command":["x"],"gpus":4`
	checkSpecCases(t, api.DecodeSpec, []specCase{
		{name: "minimal", in: `{"command":["python","train.py"],"gpus":1}`,
			want: &api.JobSpec{Command: []string{"python", "train.py"}, GPUs: 1}},
		{name: "design example", in: `{"name":"resnet","command":["python","train.py"],"env":{"K":"V"},` +
			`"workdir":"/data","gpus":4,"min_gpus":2,"max_gpus":8,"gpu_type":"v100","model":"ResNet-50",` +
			`"priority":0,"user":"alice","grace_period_s":30}`,
			want: &api.JobSpec{Name: "resnet", Command: []string{"python", "train.py"}, Env: map[string]string{"K": "V"},
				Workdir: "/data", GPUs: 4, MinGPUs: ptr(2), MaxGPUs: ptr(8), GPUType: "v100", Model: "ResNet-50",
				User: "alice", GracePeriodS: ptr(30)}},
		{name: "null bounds", in: `{` + ok + `,"min_gpus":null,"max_gpus":null}`,
			want: &api.JobSpec{Command: []string{"x"}, GPUs: 4}},
		{name: "grace zero", in: `{` + ok + `,"grace_period_s":0}`,
			want: &api.JobSpec{Command: []string{"x"}, GPUs: 4, GracePeriodS: ptr(0)}},
		{name: "missing gpus", in: `{"command":["x"]}`, field: "gpus", msg: "0: want 1..4096"},
		{name: "negative gpus", in: `{"command":["x"],"gpus":-2}`, field: "gpus", msg: "-2"},
		{name: "too many gpus", in: `{"command":["x"],"gpus":4097}`, field: "gpus", msg: "4097"},
		{name: "min above gpus", in: `{` + ok + `,"min_gpus":5}`, field: "min_gpus", msg: "5: want 1..gpus (4)"},
		{name: "min zero", in: `{` + ok + `,"min_gpus":0}`, field: "min_gpus", msg: "0"},
		{name: "max below gpus", in: `{` + ok + `,"max_gpus":3}`, field: "max_gpus", msg: "3: want gpus (4)"},
		{name: "max too large", in: `{` + ok + `,"max_gpus":5000}`, field: "max_gpus", msg: "5000"},
		{name: "missing command", in: `{"gpus":1}`, field: "command", msg: "is required"},
		{name: "empty command", in: `{"command":[],"gpus":1}`, field: "command", msg: "is required"},
		{name: "empty program", in: `{"command":[""],"gpus":1}`, field: "command", msg: "empty"},
		{name: "NUL in argument", in: `{"command":["x","a\u0000b"],"gpus":1}`, field: "command[1]", msg: "NUL"},
		{name: "unknown field", in: `{` + ok + `,"gpu":4}`, field: "gpu", msg: "unknown field"},
		{name: "string gpus", in: `{"command":["x"],"gpus":"4"}`, field: "gpus", msg: "want int, got a JSON string"},
		{name: "fractional gpus", in: `{"command":["x"],"gpus":1.5}`, field: "gpus", msg: "number 1.5"},
		{name: "shell line command", in: `{"command":"python train.py","gpus":1}`, field: "command", msg: "want []string"},
		{name: "number argument", in: `{"command":["x",1],"gpus":1}`, field: "command", msg: "want string"},
		{name: "number env value", in: `{` + ok + `,"env":{"K":1}}`, field: "env", msg: "want string"},
		{name: "bad env name", in: `{` + ok + `,"env":{"1K":"v"}}`, field: "env", msg: `"1K" is not a valid variable name`},
		{name: "NUL env value", in: `{` + ok + `,"env":{"K":"a\u0000"}}`, field: "env.K", msg: "NUL"},
		{name: "NUL workdir", in: `{` + ok + `,"workdir":"/a\u0000"}`, field: "workdir", msg: "NUL"},
		{name: "long name", in: `{` + ok + `,"name":"` + strings.Repeat("n", 254) + `"}`, field: "name", msg: "longer than 253"},
		{name: "newline in name", in: `{` + ok + `,"name":"a\nb"}`, field: "name", msg: "control"},
		{name: "negative grace", in: `{` + ok + `,"grace_period_s":-1}`, field: "grace_period_s", msg: "-1"},
		{name: "huge grace", in: `{` + ok + `,"grace_period_s":86401}`, field: "grace_period_s", msg: "86401"},
		{name: "trailing object", in: `{` + ok + `} {}`, msg: "trailing data"},
		{name: "trailing garbage", in: `{` + ok + `}x`, msg: "trailing data"},
		{name: "truncated", in: `{` + ok, msg: "malformed JSON"},
		{name: "empty body", in: ``, msg: "empty body"},
		{name: "array", in: `[]`, field: "(body)", msg: "got a JSON array"},
		{name: "null", in: `null`, field: "command", msg: "is required"},
	})
}

func TestDecodeSpecYAML(t *testing.T) {
	checkSpecCases(t, api.DecodeSpecYAML, []specCase{
		{name: "block style", in: "name: r\ncommand:\n  - python\n  - train.py\ngpus: 2\nmax_gpus: 4\nenv:\n  K: V\n",
			want: &api.JobSpec{Name: "r", Command: []string{"python", "train.py"}, GPUs: 2, MaxGPUs: ptr(4),
				Env: map[string]string{"K": "V"}}},
		{name: "JSON is YAML", in: `{"command":["x"],"gpus":1}`, want: &api.JobSpec{Command: []string{"x"}, GPUs: 1}},
		{name: "min above max", in: "command: [x]\ngpus: 4\nmin_gpus: 5\n", field: "min_gpus", msg: "5"},
		{name: "unknown field", in: "command: [x]\ngpus: 1\ngpu_types: v100\n", field: "gpu_types", msg: "unknown field"},
		{name: "word for number", in: "command: [x]\ngpus: four\n", field: "gpus", msg: "want int"},
		{name: "bool env value", in: "command: [x]\ngpus: 1\nenv: {DEBUG: on}\n", field: "env", msg: "want string"},
		{name: "duplicate key", in: "command: [x]\ngpus: 1\ngpus: 2\n", msg: `key "gpus" already set`},
		{name: "tab indent", in: "\tcommand: [x]\n", msg: "not valid YAML"},
		{name: "list", in: "- command: [x]\n", field: "(body)", msg: "array"},
		{name: "empty", in: "", field: "command", msg: "is required"},
	})
}

// TestExampleFiles decodes the job specs that docs/CLI.md shows.
func TestExampleFiles(t *testing.T) {
	data, err := os.ReadFile("../../testdata/jobs/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := api.DecodeSpecYAML(data)
	if err != nil {
		t.Fatalf("example.yaml: %v", err)
	}
	if s.Name != "resnet50-imagenet" || s.GPUs != 4 || s.Min() != 2 || s.Max() != 8 || s.Grace() != 60 ||
		s.Env["NCCL_DEBUG"] != "WARN" || s.Command[0] != "python" || s.Priority != 10 {
		t.Errorf("example.yaml decoded to %+v", s)
	}
	for file, field := range map[string]string{"bad-min.yaml": "min_gpus", "typo.yaml": "gpu"} {
		data, _ := os.ReadFile("../../testdata/jobs/" + file)
		_, err := api.DecodeSpecYAML(data)
		if fe, ok := errors.AsType[*api.FieldError](err); !ok || fe.Field != field {
			t.Errorf("%s: %v, want an error naming %s", file, err, field)
		}
	}
}

func TestSpecDefaults(t *testing.T) {
	s := api.JobSpec{Command: []string{"x"}, GPUs: 3}
	if s.Min() != 3 || s.Max() != 3 || s.Grace() != api.DefaultGracePeriodS {
		t.Errorf("defaults: min %d max %d grace %d", s.Min(), s.Max(), s.Grace())
	}
}

func TestFieldErrorString(t *testing.T) {
	if got := (&api.FieldError{Field: "gpus", Message: "0: want 1..4096"}).Error(); got != "gpus: 0: want 1..4096" {
		t.Errorf("with field: %q", got)
	}
	if got := (&api.FieldError{Message: "empty body"}).Error(); got != "empty body" {
		t.Errorf("without field: %q", got)
	}
}

// TestJobJSONNames pins the job fields that `gpusched jobs -o json` users
// rely on (DESIGN.md): present even when empty, times in RFC 3339.
func TestJobJSONNames(t *testing.T) {
	data, err := json.Marshal(api.Job{ID: "j1", State: api.Queued})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(data, &m)
	for _, k := range []string{"id", "name", "state", "gpus_requested", "alloc", "exit_code",
		"submitted_at", "started_at", "finished_at"} {
		if _, ok := m[k]; !ok {
			t.Errorf("job JSON %s lacks %q", data, k)
		}
	}
	if m["submitted_at"] != "0001-01-01T00:00:00Z" {
		t.Errorf("submitted_at = %v, want RFC 3339", m["submitted_at"])
	}
}

func TestStates(t *testing.T) {
	for _, s := range api.States() {
		want := s == api.Succeeded || s == api.Failed || s == api.Cancelled
		if s.Final() != want {
			t.Errorf("%s.Final() = %v", s, s.Final())
		}
	}
}

func TestDecodeSpecExactKeys(t *testing.T) {
	for _, c := range []struct{ body, field, msg string }{
		{`{"command":["x"],"GPUS":1}`, "GPUS", "unknown field"},
		{`{"command":["x"],"gpus":1,"Gpus":3}`, "Gpus", "unknown field"},
		{`{"command":["x"],"gpus":1,"gpus":3}`, "gpus", "given twice"},
	} {
		_, err := api.DecodeSpec([]byte(c.body))
		fe, ok := err.(*api.FieldError)
		if !ok || fe.Field != c.field || !strings.Contains(fe.Message, c.msg) {
			t.Errorf("decode %s: %v, want field %q %q", c.body, err, c.field, c.msg)
		}
	}
}
