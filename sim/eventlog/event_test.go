package eventlog

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
)

func TestAppend(t *testing.T) {
	tests := []struct {
		e    Event
		want string
	}{
		{Event{T: 0, Kind: Cluster, GPUs: []GPUInfo{{ID: "n0/0", Node: "n0", Type: "v100", MemMiB: 16384}}},
			`{"t":0,"event":"cluster","gpus":[{"id":"n0/0","node":"n0","type":"v100","mem_mib":16384}]}`},
		{Event{T: 12000, Kind: Submit, Job: "j7", Request: &Request{GPUs: 2, MinGPUs: 2, MaxGPUs: 2, Model: "ResNet-50 (batch size 64)", Steps: 5000}},
			`{"t":12,"event":"submit","job":"j7","gpus":2,"min_gpus":2,"max_gpus":2,"model":"ResNet-50 (batch size 64)","steps":5000}`},
		{Event{T: 30500, Kind: Submit, Job: "j2", Request: &Request{GPUs: 1, MinGPUs: 1, MaxGPUs: 1, Duration: 3600000, GPUType: "v100", Priority: 2}},
			`{"t":30.5,"event":"submit","job":"j2","gpus":1,"min_gpus":1,"max_gpus":1,"duration_s":3600,"gpu_type":"v100","priority":2}`},
		{Event{T: 0, Kind: Cluster, GPUs: []GPUInfo{{ID: "n0/0", Node: "n0", Type: "v100", MemMiB: 16384}},
			Nodes: []NodeInfo{{Node: "n0", Capacity: map[string]int64{"memory": 64 << 30, "cpu": 8000}}}},
			`{"t":0,"event":"cluster","gpus":[{"id":"n0/0","node":"n0","type":"v100","mem_mib":16384}],"nodes":[{"node":"n0","capacity":{"cpu":8000,"memory":68719476736}}]}`},
		{Event{T: 0, Kind: Submit, Job: "r", Request: &Request{GPUs: 4, MinGPUs: 4, MaxGPUs: 4, Duration: 1000, ReplicaGPUs: 2,
			Requests: map[string]int64{"pods": 1, "cpu": 4000}}},
			`{"t":0,"event":"submit","job":"r","gpus":4,"min_gpus":4,"max_gpus":4,"duration_s":1,"replica_gpus":2,"requests":{"cpu":4000,"pods":1}}`},
		{Event{T: 12000, Kind: Start, Job: "j7", Alloc: []string{"n0/0", "n0/1"}},
			`{"t":12,"event":"start","job":"j7","alloc":["n0/0","n0/1"]}`},
		{Event{T: 900000, Kind: Preempt, Job: "j7"}, `{"t":900,"event":"preempt","job":"j7"}`},
		{Event{T: 1, Kind: Reject, Job: "x\"y", Reason: "no fit"}, `{"t":0.001,"event":"reject","job":"x\"y","reason":"no fit"}`},
	}
	for _, tc := range tests {
		got := string(Append(nil, tc.e))
		if got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("invalid JSON: %s", got)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	w.Emit(Event{T: 1000, Kind: Finish, Job: "a"})
	w.Emit(Event{T: 2000, Kind: Finish, Job: "b"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "{\"t\":1,\"event\":\"finish\",\"job\":\"a\"}\n{\"t\":2,\"event\":\"finish\",\"job\":\"b\"}\n"
	if b.String() != want {
		t.Errorf("got %q", b.String())
	}
}

// TestAppendStrIsMarshal compares appendStr with json.Marshal on every
// single byte, on strings json.Marshal escapes, and on seeded random
// strings over an alphabet that mixes plain and escaped characters.
func TestAppendStrIsMarshal(t *testing.T) {
	cases := []string{"", "j1", "a b", `q"`, `b\s`, "<", ">", "&", "\t", "\x7f", "ü", "\xff", "\u2028", "~ok"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	r := rand.New(rand.NewSource(29))
	const alphabet = "ab09 -_/~\"\\<>&\x00\x1f\x7f\xc3\xbc\xe2\x80\xa8"
	for range 5000 {
		b := make([]byte, r.Intn(12))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendStr([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("appendStr(%q) = %s, json.Marshal %s", s, got[1:], want)
		}
	}
}
