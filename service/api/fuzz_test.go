package api_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/gpusched/gpusched/service/api"
)

// specSeeds are inputs both fuzz targets start from.
func specSeeds(f *testing.F) {
	for _, s := range []string{
		`{"command":["python","train.py"],"gpus":1}`,
		`{"name":"resnet","command":["python","train.py"],"env":{"K":"V"},"workdir":"/data","gpus":4,` +
			`"min_gpus":2,"max_gpus":8,"gpu_type":"v100","model":"ResNet-50","priority":0,"user":"alice","grace_period_s":30}`,
		`{"command":["x"],"gpus":4,"min_gpus":5}`,
		`{"command":["x"],"gpus":"4"}`,
		`{"command":["x"],"gpus":1} {}`,
		`{"command":["x"],"gpus":1,"env":{}}`,
		`{"command":["x","\u0000"],"gpus":1}`,
		`{"command":["x"],"gpus":2,"cpus":1.5,"memory":"64Gi","resources":{"rdma/hca":1}}`,
		`{"command":["x"],"gpus":1,"cpus":"500m","memory":1e9,"resources":{"cpu":1,"x":null}}`,
		`{"command":["x"],"gpus":1,"cpus":true}`,
		"command: [x]\ngpus: 1\ncpus: 0.25\nmemory: 8Gi\n",
		"command: [x]\ngpus: 2\nmax_gpus: 4\n",
		"[]", "null", "", "{",
	} {
		f.Add([]byte(s))
	}
	if data, err := os.ReadFile("../../testdata/jobs/example.yaml"); err == nil {
		f.Add(data)
	}
}

// checkDecoded checks one decode result: an error is a *api.FieldError; a
// spec is valid and survives a JSON round trip unchanged.
func checkDecoded(t *testing.T, s api.JobSpec, err error) {
	if err != nil {
		var fe *api.FieldError
		if !errors.As(err, &fe) || err != error(fe) {
			t.Fatalf("error %#v is not a *api.FieldError", err)
		}
		if fe.Message == "" {
			t.Fatalf("error without a message: %#v", fe)
		}
		return
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("decoded spec is invalid: %v", err)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("encode %+v: %v", s, err)
	}
	again, err := api.DecodeSpec(data)
	if err != nil {
		t.Fatalf("re-decode %s: %v", data, err)
	}
	if len(s.Env) == 0 {
		s.Env = nil // an empty env is omitted when encoded
	}
	if !reflect.DeepEqual(again, s) {
		t.Fatalf("round trip changed the spec:\n was %+v\n now %+v", s, again)
	}
}

// FuzzDecodeSpec: DecodeSpec never panics, rejects with a *api.FieldError,
// and accepts only specs that re-encode to themselves.
func FuzzDecodeSpec(f *testing.F) {
	specSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := api.DecodeSpec(data)
		checkDecoded(t, s, err)
	})
}

// FuzzDecodeSpecYAML is FuzzDecodeSpec for the YAML form.
func FuzzDecodeSpecYAML(f *testing.F) {
	specSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := api.DecodeSpecYAML(data)
		checkDecoded(t, s, err)
	})
}
