package audit

import (
	"strings"
	"testing"
)

// Lines shared by the violation cases.
const (
	subA   = `{"t":1,"event":"submit","job":"a","gpus":1}`
	subB   = `{"t":1,"event":"submit","job":"b","gpus":1}`
	startA = `{"t":2,"event":"start","job":"a","alloc":["n0/0"]}`
)

// violation is a log that Check must reject with exactly the message want.
type violation struct {
	name  string
	lines []string
	want  string
}

func TestCheckViolationsFormat(t *testing.T) {
	checkViolations(t, []violation{
		{"empty log", nil, "x.jsonl: empty log: want a cluster event on line 1"},
		{"empty line", []string{cluster4, "", subA}, "x.jsonl:2: empty line"},
		{"invalid JSON", []string{cluster4, `{"t":1,`}, "x.jsonl:2: invalid JSON: unexpected end of JSON input"},
		{"not an object", []string{cluster4, `[1]`}, "x.jsonl:2: invalid JSON: json: cannot unmarshal array into Go value of type audit.rawEvent"},
		{"missing t", []string{cluster4, `{"event":"submit","job":"a","gpus":1}`}, "x.jsonl:2: missing t"},
		{"missing event", []string{cluster4, `{"t":1,"job":"a"}`}, "x.jsonl:2: missing event"},
		{"negative t", []string{`{"t":-1,"event":"cluster","gpus":[]}`}, "x.jsonl:1: negative t -1"},
		{"t goes back", []string{cluster4, `{"t":5,"event":"submit","job":"a","gpus":1}`, `{"t":4.5,"event":"submit","job":"b","gpus":1}`},
			"x.jsonl:3: t 4.5 before the previous line's t 5"},
		{"unknown event", []string{cluster4, `{"t":1,"event":"migrate","job":"a"}`}, `x.jsonl:2: unknown event "migrate"`},
	})
}

func TestCheckViolationsCluster(t *testing.T) {
	checkViolations(t, []violation{
		{"first line not cluster", []string{subA}, `x.jsonl:1: first event is "submit", want "cluster"`},
		{"cluster without gpus", []string{`{"t":0,"event":"cluster"}`}, "x.jsonl:1: cluster event has no gpus"},
		{"cluster gpus not a list", []string{`{"t":0,"event":"cluster","gpus":3}`},
			"x.jsonl:1: cluster event: gpus must be a list of GPUs: json: cannot unmarshal number into Go value of type []audit.gpuInfo"},
		{"GPU without id", []string{`{"t":0,"event":"cluster","gpus":[{"id":"g0"},{"node":"n0"}]}`}, "x.jsonl:1: cluster event: GPU #2 has no id"},
		{"duplicate GPU id", []string{`{"t":0,"event":"cluster","gpus":[{"id":"g0"},{"id":"g1"},{"id":"g0"}]}`},
			"x.jsonl:1: cluster event: GPU id g0 listed twice"},
		{"second cluster", []string{cluster4, subA, `{"t":1,"event":"cluster","gpus":[]}`}, "x.jsonl:3: cluster event after line 1"},
	})
}

func TestCheckViolationsSubmit(t *testing.T) {
	checkViolations(t, []violation{
		{"submit without job", []string{cluster4, `{"t":1,"event":"submit","gpus":1}`}, "x.jsonl:2: submit event has no job"},
		{"submitted twice", []string{cluster4, subA, subB, subA}, "x.jsonl:4: a submitted again (first on line 2)"},
		{"submit without gpus", []string{cluster4, `{"t":1,"event":"submit","job":"a"}`}, "x.jsonl:2: submit of a has no gpus"},
		{"submit gpus not an integer", []string{cluster4, `{"t":1,"event":"submit","job":"a","gpus":1.5}`},
			"x.jsonl:2: submit of a: gpus must be an integer: json: cannot unmarshal number 1.5 into Go value of type int"},
		{"submit min above gpus", []string{cluster4, `{"t":1,"event":"submit","job":"a","gpus":2,"min_gpus":3,"max_gpus":4}`},
			"x.jsonl:2: submit of a: want 1 ≤ min_gpus ≤ gpus ≤ max_gpus, got 3, 2, 4"},
		{"submit zero gpus", []string{cluster4, `{"t":1,"event":"submit","job":"a","gpus":0}`},
			"x.jsonl:2: submit of a: want 1 ≤ min_gpus ≤ gpus ≤ max_gpus, got 0, 0, 0"},
		{"submit with alloc", []string{cluster4, `{"t":1,"event":"submit","job":"a","gpus":1,"alloc":["n0/0"]}`},
			"x.jsonl:2: submit event carries an alloc; only start and resize do"},
	})
}

func TestCheckViolationsLifecycle(t *testing.T) {
	checkViolations(t, []violation{
		{"event without job", []string{cluster4, subA, `{"t":2,"event":"start","alloc":["n0/0"]}`}, "x.jsonl:3: start event has no job"},
		{"start before submit", []string{cluster4, startA}, "x.jsonl:2: start of a before its submit"},
		{"finish before submit", []string{cluster4, subB, `{"t":2,"event":"finish","job":"a"}`}, "x.jsonl:3: finish of a before its submit"},
		{"start while running", []string{cluster4, subA, startA, `{"t":3,"event":"start","job":"a","alloc":["n0/1"]}`},
			"x.jsonl:4: start of a while it runs"},
		{"start after finish", []string{cluster4, subA, startA, `{"t":3,"event":"finish","job":"a"}`, `{"t":4,"event":"start","job":"a","alloc":["n0/0"]}`},
			"x.jsonl:5: start of a after it finished"},
		{"start after reject", []string{cluster4, subA, `{"t":1,"event":"reject","job":"a","reason":"r"}`, startA},
			"x.jsonl:4: start of a after it was rejected"},
		{"resize while waiting", []string{cluster4, subA, `{"t":2,"event":"resize","job":"a","alloc":["n0/0"]}`},
			"x.jsonl:3: resize of a while it waits"},
		{"resize after finish", []string{cluster4, subA, startA, `{"t":3,"event":"finish","job":"a"}`, `{"t":4,"event":"resize","job":"a","alloc":["n0/0"]}`},
			"x.jsonl:5: resize of a after it finished"},
		{"resize unchanged", []string{cluster4, `{"t":1,"event":"submit","job":"a","gpus":2,"min_gpus":1,"max_gpus":2}`,
			`{"t":2,"event":"start","job":"a","alloc":["n0/0","n0/1"]}`, `{"t":3,"event":"resize","job":"a","alloc":["n0/1","n0/0"]}`},
			"x.jsonl:4: resize of a leaves its allocation unchanged"},
		{"preempt while waiting", []string{cluster4, subA, `{"t":2,"event":"preempt","job":"a"}`}, "x.jsonl:3: preempt of a while it waits"},
		{"preempt twice", []string{cluster4, subA, startA, `{"t":3,"event":"preempt","job":"a"}`, `{"t":4,"event":"preempt","job":"a"}`},
			"x.jsonl:5: preempt of a while it waits"},
		{"finish never started", []string{cluster4, subA, `{"t":2,"event":"finish","job":"a"}`}, "x.jsonl:3: finish of a while it waits"},
		{"finish twice", []string{cluster4, subA, startA, `{"t":3,"event":"finish","job":"a"}`, `{"t":4,"event":"finish","job":"a"}`},
			"x.jsonl:5: finish of a after it finished"},
		{"finish with alloc", []string{cluster4, subA, startA, `{"t":3,"event":"finish","job":"a","alloc":["n0/0"]}`},
			"x.jsonl:4: finish event carries an alloc; only start and resize do"},
		{"reject while running", []string{cluster4, subA, startA, `{"t":3,"event":"reject","job":"a","reason":"r"}`}, "x.jsonl:4: reject of a while it runs"},
		{"reject after preempt", []string{cluster4, subA, startA, `{"t":3,"event":"preempt","job":"a"}`, `{"t":4,"event":"reject","job":"a","reason":"r"}`},
			"x.jsonl:5: reject of a, which has already run"},
		{"reject twice", []string{cluster4, subA, `{"t":1,"event":"reject","job":"a","reason":"r"}`, `{"t":1,"event":"reject","job":"a","reason":"r"}`},
			"x.jsonl:4: reject of a after it was rejected"},
		{"reject without reason", []string{cluster4, subA, `{"t":1,"event":"reject","job":"a"}`},
			"x.jsonl:3: reject of a gives no reason"},
		{"unfinished without reason", []string{cluster4, subA, `{"t":1,"event":"unfinished","job":"a"}`},
			"x.jsonl:3: unfinished report of a gives no reason"},
		{"unfinished after finish", []string{cluster4, subA, startA, `{"t":3,"event":"finish","job":"a"}`,
			`{"t":3,"event":"unfinished","job":"a","reason":"r"}`}, "x.jsonl:5: unfinished report of a after it finished"},
		{"start after unfinished", []string{cluster4, subA, `{"t":1,"event":"unfinished","job":"a","reason":"r"}`, startA},
			"x.jsonl:4: start of a after it was reported unfinished"},
		{"job left waiting", []string{cluster4, subA, subB, startA, `{"t":3,"event":"finish","job":"a"}`},
			"x.jsonl: at the end: b (submitted on line 3) is waiting but neither finished, rejected nor reported unfinished"},
		{"job left running", []string{cluster4, subA, startA},
			"x.jsonl: at the end: a (submitted on line 2) is running but neither finished, rejected nor reported unfinished"},
	})
}

func TestCheckViolationsAlloc(t *testing.T) {
	checkViolations(t, []violation{
		{"empty alloc", []string{cluster4, subA, `{"t":2,"event":"start","job":"a","alloc":[]}`}, "x.jsonl:3: start of a has an empty alloc"},
		{"missing alloc", []string{cluster4, subA, `{"t":2,"event":"start","job":"a"}`}, "x.jsonl:3: start of a has an empty alloc"},
		{"unknown GPU", []string{cluster4, subA, `{"t":2,"event":"start","job":"a","alloc":["n9/0"]}`}, "x.jsonl:3: GPU n9/0 given to a does not exist"},
		{"duplicate GPU in alloc", []string{cluster4, `{"t":1,"event":"submit","job":"a","gpus":2}`, `{"t":2,"event":"start","job":"a","alloc":["n0/0","n0/0"]}`},
			"x.jsonl:3: GPU n0/0 listed twice in the alloc of a"},
		{"GPU held by another job", []string{cluster4, subA, subB, startA, `{"t":3,"event":"start","job":"b","alloc":["n0/0"]}`},
			"x.jsonl:5: GPU n0/0 given to b while held by a"},
		{"resize onto another job's GPU", []string{cluster4, subA, `{"t":1,"event":"submit","job":"b","gpus":1,"max_gpus":2}`, startA,
			`{"t":2,"event":"start","job":"b","alloc":["n0/1"]}`, `{"t":3,"event":"resize","job":"b","alloc":["n0/1","n0/0"]}`},
			"x.jsonl:6: GPU n0/0 given to b while held by a"},
		{"too few GPUs", []string{cluster4, `{"t":1,"event":"submit","job":"a","gpus":2}`, startA}, "x.jsonl:3: a given 1 GPUs; its submit allows 2 to 2"},
		{"resize beyond max", []string{cluster4, `{"t":1,"event":"submit","job":"a","gpus":1,"max_gpus":2}`, startA,
			`{"t":3,"event":"resize","job":"a","alloc":["n0/0","n0/1","n1/0"]}`}, "x.jsonl:4: a given 3 GPUs; its submit allows 1 to 2"},
		{"wrong GPU type", []string{cluster4, `{"t":1,"event":"submit","job":"a","gpus":2,"gpu_type":"v100"}`,
			`{"t":2,"event":"start","job":"a","alloc":["n0/0","n1/0"]}`}, `x.jsonl:3: GPU n1/0 of type "k80" given to a, which requires "v100"`},
	})
}

// checkViolations runs Check on each case's log, named x.jsonl.
func checkViolations(t *testing.T, tests []violation) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := strings.Join(tt.lines, "\n")
			if len(tt.lines) > 0 {
				log += "\n"
			}
			_, err := Check(strings.NewReader(log), "x.jsonl")
			if err == nil {
				t.Fatalf("Check succeeded, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Check error\n got %q\nwant %q", err, tt.want)
			}
		})
	}
}

// cluster2 is two nodes of two GPUs: n0 offers 8 CPUs and 16 GiB, n1 4
// CPUs and no memory figure (so none to give).
const cluster2 = `{"t":0,"event":"cluster","gpus":[{"id":"n0/0","node":"n0"},{"id":"n0/1","node":"n0"},` +
	`{"id":"n1/0","node":"n1"},{"id":"n1/1","node":"n1"}],` +
	`"nodes":[{"node":"n0","capacity":{"cpu":8000,"memory":17179869184}},{"node":"n1","capacity":{"cpu":4000}}]}`

func TestCheckViolationsResources(t *testing.T) {
	sub := func(job, rest string) string {
		return `{"t":1,"event":"submit","job":"` + job + `","gpus":2` + rest + `}`
	}
	checkViolations(t, []violation{
		{"nodes not a list", []string{`{"t":0,"event":"cluster","gpus":[{"id":"g0"}],"nodes":{}}`},
			"x.jsonl:1: cluster event: nodes must be a list of nodes with a capacity: json: cannot unmarshal object into Go value of type []audit.nodeInfo"},
		{"node without name", []string{`{"t":0,"event":"cluster","gpus":[{"id":"g0"}],"nodes":[{"capacity":{}}]}`},
			"x.jsonl:1: cluster event: node #1 has no name"},
		{"node twice", []string{`{"t":0,"event":"cluster","gpus":[{"id":"g0"}],"nodes":[{"node":"a","capacity":{}},{"node":"a","capacity":{}}]}`},
			"x.jsonl:1: cluster event: node a listed twice"},
		{"negative capacity", []string{`{"t":0,"event":"cluster","gpus":[{"id":"g0"}],"nodes":[{"node":"a","capacity":{"cpu":-1}}]}`},
			"x.jsonl:1: cluster event: node a has a negative capacity of cpu (-1)"},
		{"negative request", []string{cluster2, sub("a", `,"requests":{"cpu":-5}`)},
			"x.jsonl:2: submit of a asks a negative amount of cpu (-5)"},
		{"zero replica GPUs", []string{cluster2, sub("a", `,"replica_gpus":0`)},
			"x.jsonl:2: submit of a: replica_gpus must be at least 1, got 0"},
		{"requests without capacities", []string{cluster4, sub("a", `,"requests":{"cpu":1000}`)},
			"x.jsonl:2: submit of a asks for cpu, but the cluster event lists no node capacities"},
		// Two replicas of 5 CPUs on n0's 8.
		{"overbooked by one job", []string{cluster2, sub("a", `,"requests":{"cpu":5000}`),
			`{"t":2,"event":"start","job":"a","alloc":["n0/0","n0/1"]}`},
			"x.jsonl:3: node n0 overbooked on cpu after a got 2 of its GPUs: its jobs ask 10000, it offers 8000"},
		// One replica of 2 GPUs asks 5 CPUs: fits n0; a second job's 4 do not.
		{"overbooked by a second job", []string{cluster2, sub("a", `,"replica_gpus":2,"requests":{"cpu":5000}`),
			`{"t":1,"event":"submit","job":"b","gpus":1,"max_gpus":2,"requests":{"cpu":4000}}`,
			`{"t":2,"event":"start","job":"a","alloc":["n0/0","n0/1"]}`,
			`{"t":2,"event":"start","job":"b","alloc":["n1/0"]}`,
			`{"t":3,"event":"resize","job":"b","alloc":["n1/0","n1/1"]}`},
			"x.jsonl:6: node n1 overbooked on cpu after b got 2 of its GPUs: its jobs ask 8000, it offers 4000"},
		{"a resource the node lacks", []string{cluster2, sub("a", `,"requests":{"memory":1}`),
			`{"t":2,"event":"start","job":"a","alloc":["n1/0","n1/1"]}`},
			"x.jsonl:3: node n1 overbooked on memory after a got 2 of its GPUs: its jobs ask 2, it offers 0"},
	})
}

// TestCheckResourcesFreed: what a job's replicas asked is given back when it
// stops, so the next job fits where it would not have before.
func TestCheckResourcesFreed(t *testing.T) {
	log := strings.Join([]string{cluster2,
		`{"t":1,"event":"submit","job":"a","gpus":1,"requests":{"cpu":6000}}`,
		`{"t":1,"event":"submit","job":"b","gpus":1,"requests":{"cpu":6000}}`,
		`{"t":2,"event":"start","job":"a","alloc":["n0/0"]}`,
		`{"t":3,"event":"preempt","job":"a"}`,
		`{"t":3,"event":"start","job":"b","alloc":["n0/1"]}`,
		`{"t":4,"event":"finish","job":"b"}`,
		`{"t":4,"event":"start","job":"a","alloc":["n0/0"]}`,
		`{"t":5,"event":"finish","job":"a"}`,
	}, "\n")
	res, err := Check(strings.NewReader(log), "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 2 || res.Preemptions != 1 {
		t.Errorf("completed %d, preemptions %d; want 2 and 1", res.Completed, res.Preemptions)
	}
}
