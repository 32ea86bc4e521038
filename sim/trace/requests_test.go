package trace

import (
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// TestReadJSONLRequests: a replica's cpus, memory and resources, beside
// replica_cpu_milli and replica_mem_mib.
func TestReadJSONLRequests(t *testing.T) {
	const ok = `{"id":"a","submit_s":0,"gpus":2,"duration_s":1`
	job := func(req model.Resources) []model.JobSpec {
		return []model.JobSpec{{ID: "a", GPUs: 2, MinGPUs: 2, MaxGPUs: 2, Duration: model.Second, Requests: req}}
	}
	const cpu, mem = model.ResourceCPU, model.ResourceMemory
	runReadCases(t, "r.jsonl", "jsonl", []readCase{
		{name: "cores and quantity", in: ok + `,"cpus":4,"memory":"16Gi"}` + "\n", want: job(model.Resources{cpu: 4000, mem: 16 << 30})},
		{name: "fractional cores", in: ok + `,"cpus":0.5}` + "\n", want: job(model.Resources{cpu: 500})},
		{name: "cpu quantity", in: ok + `,"cpus":"1500m","memory":1073741824}` + "\n", want: job(model.Resources{cpu: 1500, mem: 1 << 30})},
		{name: "named", in: ok + `,"resources":{"rdma/hca":1,"ephemeral-storage":"10Gi","pods":2}}` + "\n",
			want: job(model.Resources{"rdma/hca": 1, model.ResourceEphemeral: 10 << 30, model.ResourcePods: 2})},
		{name: "old and new keys together", in: ok + `,"replica_cpu_milli":2000,"memory":"1Gi","resources":{"rdma/hca":1}}` + "\n",
			want: job(model.Resources{cpu: 2000, mem: 1 << 30, "rdma/hca": 1})},
		{name: "zeros ask for nothing", in: ok + `,"cpus":0,"memory":"0","resources":{"x":0}}` + "\n", want: job(nil)},
		{name: "null", in: ok + `,"cpus":null,"resources":null}` + "\n", want: job(nil)},
		{name: "negative cores", in: ok + `,"cpus":-1}` + "\n", err: `r.jsonl:1: field "cpus": cpu: -1 is not a non-negative number`},
		{name: "finer than a millicore", in: ok + `,"cpus":0.0001}` + "\n", err: `r.jsonl:1: field "cpus": cpu: 0.0001 cores is not a whole number of millicores`},
		{name: "bad quantity", in: ok + `,"memory":"16GB"}` + "\n", err: `r.jsonl:1: field "memory": memory: "16GB" is not a quantity (e.g. "64Gi" or "512Mi")`},
		{name: "fractional bytes", in: ok + `,"memory":0.5}` + "\n", err: `r.jsonl:1: field "memory": memory: 0.5 is not a whole number`},
		{name: "cpus a bool", in: ok + `,"cpus":true}` + "\n", err: `r.jsonl:1: field "cpus": got JSON bool, want a number or a quantity string`},
		{name: "memory an object", in: ok + `,"memory":{"gi":1}}` + "\n", err: `r.jsonl:1: field "memory": got JSON object, want a number or a quantity string`},
		{name: "resources a list", in: ok + `,"resources":[1]}` + "\n", err: `r.jsonl:1: field "resources": got JSON array, want {"name": amount, ...}`},
		{name: "resource a list", in: ok + `,"resources":{"x":[1]}}` + "\n", err: `r.jsonl:1: field "resources": got JSON array, want {"name": amount, ...}`},
		{name: "bad name", in: ok + `,"resources":{"a b":1}}` + "\n", err: `r.jsonl:1: field "resources": resource "a b": only letters`},
		{name: "gpus by name", in: ok + `,"resources":{"nvidia.com/gpu":1}}` + "\n", err: `r.jsonl:1: field "resources": resource "nvidia.com/gpu": GPUs are requested with gpus`},
		{name: "fractional count", in: ok + `,"resources":{"rdma/hca":"0.5"}}` + "\n", err: `r.jsonl:1: field "resources": rdma/hca: "0.5" is not a whole number`},
		{name: "cpu twice", in: ok + `,"replica_cpu_milli":1000,"cpus":1}` + "\n", err: `r.jsonl:1: replica_cpu_milli and cpus both give the replica's cpu: give one`},
		{name: "memory twice", in: ok + `,"memory":"1Gi","resources":{"memory":"1Gi"}}` + "\n", err: `r.jsonl:1: memory and resources.memory both give the replica's memory: give one`},
		{name: "memory old and new", in: ok + `,"replica_mem_mib":1,"memory":"1Mi"}` + "\n", err: `r.jsonl:1: replica_mem_mib and memory both give the replica's memory`},
		{name: "line number", in: ok + "}\n\n" + `{"id":"b","submit_s":0,"gpus":1,"duration_s":1,"cpus":"x"}` + "\n", err: `r.jsonl:3: field "cpus": cpu: "x" is not a quantity`},
	})
}
