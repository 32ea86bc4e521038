package api_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

// TestDecodeSpecResources: cpus, memory and resources decode from numbers
// and quantity strings; bad ones are errors naming the field.
func TestDecodeSpecResources(t *testing.T) {
	const ok = `"command":["x"],"gpus":1`
	spec := func(cpus, mem api.Quantity, res map[string]api.Quantity) *api.JobSpec {
		return &api.JobSpec{Command: []string{"x"}, GPUs: 1, CPUs: cpus, Memory: mem, Resources: res}
	}
	checkSpecCases(t, api.DecodeSpec, []specCase{
		{name: "numbers", in: `{` + ok + `,"cpus":2,"memory":1073741824}`, want: spec("2", "1073741824", nil)},
		{name: "strings", in: `{` + ok + `,"cpus":"500m","memory":"64Gi","resources":{"rdma/hca":"1"}}`,
			want: spec("500m", "64Gi", map[string]api.Quantity{"rdma/hca": "1"})},
		{name: "fraction of a core", in: `{` + ok + `,"cpus":0.5}`, want: spec("0.5", "", nil)},
		{name: "exact decimal", in: `{` + ok + `,"cpus":1.1}`, want: spec("1.1", "", nil)},
		{name: "null is absent", in: `{` + ok + `,"cpus":null,"resources":{}}`, want: spec("", "", nil)},
		{name: "zero", in: `{` + ok + `,"cpus":0}`, want: spec("0", "", nil)},
		{name: "negative cpus", in: `{` + ok + `,"cpus":-1}`, field: "cpus", msg: "negative"},
		{name: "word cpus", in: `{` + ok + `,"cpus":"many"}`, field: "cpus", msg: "not a quantity"},
		{name: "finer than a millicore", in: `{` + ok + `,"cpus":0.0001}`, field: "cpus", msg: "finer than a millicore"},
		{name: "bool cpus", in: `{` + ok + `,"cpus":true}`, field: "cpus", msg: "want a number or a quantity"},
		{name: "object memory", in: `{` + ok + `,"memory":{"gi":1}}`, field: "memory", msg: "got a JSON object"},
		{name: "fractional bytes", in: `{` + ok + `,"memory":"1.5"}`, field: "memory", msg: "not a whole number"},
		{name: "memory unit typo", in: `{` + ok + `,"memory":"64GB"}`, field: "memory", msg: "not a quantity"},
		{name: "cpu as resource", in: `{` + ok + `,"resources":{"cpu":"2"}}`, field: "resources.cpu", msg: "give CPUs as cpus"},
		{name: "memory as resource", in: `{` + ok + `,"resources":{"memory":"2Gi"}}`, field: "resources.memory", msg: "give memory as memory"},
		{name: "pods", in: `{` + ok + `,"resources":{"pods":1}}`, field: "resources.pods", msg: "counts no pods"},
		{name: "gpu as resource", in: `{` + ok + `,"resources":{"nvidia.com/gpu":1}}`, field: "resources.nvidia.com/gpu", msg: "gpus"},
		{name: "bad resource name", in: `{` + ok + `,"resources":{"a b":1}}`, field: "resources.a b", msg: "only letters"},
		{name: "fractional count", in: `{` + ok + `,"resources":{"rdma/hca":0.5}}`, field: "resources.rdma/hca", msg: "not a whole number"},
		{name: "huge", in: `{` + ok + `,"memory":"1Ei"}`, field: "memory", msg: "too large"},
	})
	checkSpecCases(t, api.DecodeSpecYAML, []specCase{
		{name: "yaml", in: "command: [x]\ngpus: 1\ncpus: 4\nmemory: 64Gi\nresources:\n  rdma/hca: 1\n",
			want: spec("4", "64Gi", map[string]api.Quantity{"rdma/hca": "1"})},
	})
}

// TestSpecRequests: the model's amounts per GPU, zeros left out.
func TestSpecRequests(t *testing.T) {
	for _, c := range []struct {
		spec api.JobSpec
		want model.Resources
	}{
		{api.JobSpec{}, nil},
		{api.JobSpec{CPUs: "0", Memory: "0"}, nil},
		{api.JobSpec{CPUs: "2"}, model.Resources{"cpu": 2000}},
		{api.JobSpec{CPUs: "1.1", Memory: "64Gi"}, model.Resources{"cpu": 1100, "memory": 64 << 30}},
		{api.JobSpec{CPUs: "250m", Resources: map[string]api.Quantity{"rdma/hca": "2", "x": "0"}},
			model.Resources{"cpu": 250, "rdma/hca": 2}},
		{api.JobSpec{Memory: "1G"}, model.Resources{"memory": 1e9}},
	} {
		got, err := c.spec.Requests()
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: Requests() = %v, %v; want %v", c.spec, got, err, c.want)
		}
	}
}

// TestQuantityJSON: numbers stay numbers, the rest strings; a decoded
// quantity encodes to what decodes to it again.
func TestQuantityJSON(t *testing.T) {
	for _, c := range []struct {
		q    api.Quantity
		want string
	}{{"2", `2`}, {"0.5", `0.5`}, {"500m", `"500m"`}, {"64Gi", `"64Gi"`}, {"1e3", `1e3`}, {" 2", `" 2"`},
		{"2 ", `"2 "`}, {"0x1", `"0x1"`}, {"-", `"-"`}} {
		data, err := json.Marshal(c.q)
		if err != nil || string(data) != c.want {
			t.Errorf("marshal %q = %s, %v; want %s", c.q, data, err, c.want)
		}
		var back api.Quantity
		if err := json.Unmarshal(data, &back); err != nil || back != c.q {
			t.Errorf("unmarshal %s = %q, %v; want %q", data, back, err, c.q)
		}
	}
}

// TestParseResources: the API's amount maps both ways, errors naming the
// entry.
func TestParseResources(t *testing.T) {
	r := model.Resources{"cpu": 62500, "memory": 500 << 30, "rdma/hca": 4, "ephemeral-storage": 1e12}
	m := api.FormatResources(r)
	if want := map[string]string{"cpu": "62500m", "memory": "500Gi", "rdma/hca": "4", "ephemeral-storage": "976562500Ki"}; !reflect.DeepEqual(m, want) {
		t.Errorf("FormatResources = %v, want %v", m, want)
	}
	back, err := api.ParseResources("capacity", m)
	if err != nil || !back.Equal(r) {
		t.Errorf("ParseResources(%v) = %v, %v; want %v", m, back, err, r)
	}
	if got, err := api.ParseResources("capacity", nil); got != nil || err != nil {
		t.Errorf("ParseResources(nil) = %v, %v", got, err)
	}
	for in, field := range map[string]string{"cpu=x": "capacity.cpu", "memory=-1": "capacity.memory", "a b=1": "capacity.a b"} {
		name, v, _ := strings.Cut(in, "=")
		_, err := api.ParseResources("capacity", map[string]string{name: v})
		if fe, ok := errors.AsType[*api.FieldError](err); !ok || fe.Field != field {
			t.Errorf("ParseResources(%s) = %v, want an error naming %s", in, err, field)
		}
	}
	if api.ResourceField("cpu") != "cpus" || api.ResourceField("memory") != "memory" || api.ResourceField("rdma/hca") != "resources.rdma/hca" {
		t.Error("ResourceField")
	}
}
