package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

func TestCompactAlloc(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, "-"},
		{[]string{"n0/0"}, "n0/0"},
		{[]string{"n0/0", "n0/1", "n0/2", "n0/3"}, "n0/0-3"},
		{[]string{"n0/0", "n0/1", "n0/3", "n1/0", "n1/1"}, "n0/0-1,n0/3,n1/0-1"},
		{[]string{"rack1/n0/2", "rack1/n0/3"}, "rack1/n0/2-3"},
		{[]string{"odd", "n0/x", "n0/1"}, "odd,n0/x,n0/1"},
		{[]string{"n0/1", "n0/0"}, "n0/1,n0/0"},
	}
	for _, tt := range tests {
		if got := compactAlloc(tt.in); got != tt.want {
			t.Errorf("compactAlloc(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAgo(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s ago"},
		{-time.Minute, "0s ago"},
		{45 * time.Second, "45s ago"},
		{3*time.Minute + 59*time.Second, "3m ago"},
		{2 * time.Hour, "2h ago"},
		{2*time.Hour + 5*time.Minute, "2h5m ago"},
		{3*24*time.Hour + 4*time.Hour, "3d4h ago"},
		{3 * 24 * time.Hour, "3d ago"},
	}
	for _, tt := range tests {
		if got := ago(now.Add(-tt.d), now); got != tt.want {
			t.Errorf("ago(now-%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	if got := ago(time.Time{}, now); got != "-" {
		t.Errorf("ago(zero) = %q", got)
	}
}

func TestGPUTypes(t *testing.T) {
	g := func(types ...string) []api.GPU {
		out := make([]api.GPU, len(types))
		for i, ty := range types {
			out[i] = api.GPU{Index: i, Type: ty}
		}
		return out
	}
	for _, tt := range []struct {
		in   []api.GPU
		want string
	}{
		{g(), "-"},
		{g("v100", "v100"), "v100"},
		{g("v100", "k80", "v100", ""), "v100=2,k80=1,?=1"},
	} {
		if got := gpuTypes(tt.in); got != tt.want {
			t.Errorf("gpuTypes(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQuoteArgsAndCell(t *testing.T) {
	if got := quoteArgs([]string{"sh", "-c", "echo hi", "it's", "", "a=b,c/d"}); got != `sh -c 'echo hi' 'it'\''s' '' a=b,c/d` {
		t.Errorf("quoteArgs = %s", got)
	}
	if got := cell("a\tb\x1b[31m"); got != "a?b?[31m" {
		t.Errorf("cell = %q", got)
	}
	if cell("") != "-" {
		t.Error(`cell("") != "-"`)
	}
}

func TestGPUsText(t *testing.T) {
	for _, tt := range []struct {
		j    api.Job
		want string
	}{
		{api.Job{GPUsRequested: 4, MinGPUs: 4, MaxGPUs: 4}, "4"},
		{api.Job{GPUsRequested: 4}, "4"},
		{api.Job{GPUsRequested: 4, MinGPUs: 2, MaxGPUs: 8}, "4 (2-8)"},
	} {
		if got := gpusText(tt.j); got != tt.want {
			t.Errorf("gpusText(%+v) = %q, want %q", tt.j, got, tt.want)
		}
	}
}

func TestParseGrace(t *testing.T) {
	for in, want := range map[string]int{"0": 0, "45": 45, "2m": 120, "1m30s": 90, "-1": -1} {
		if got, err := parseGrace(in); err != nil || got != want {
			t.Errorf("parseGrace(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1.5s", "soon", "500ms"} {
		if _, err := parseGrace(in); err == nil {
			t.Errorf("parseGrace(%q) succeeded", in)
		}
	}
}

func TestFlagMessage(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&api.FieldError{Field: "min_gpus", Message: "5: want 1..gpus (4)"}, "--min-gpus: 5: want 1..gpus (4)"},
		{&api.FieldError{Field: "grace_period_s", Message: "-1: want 0..86400"}, "--grace-period: -1: want 0..86400"},
		{&api.FieldError{Field: "env.K", Message: "value contains a NUL byte"}, "--env: value contains a NUL byte"},
		{&api.FieldError{Field: "command[1]", Message: "contains a NUL byte"}, "command[1]: contains a NUL byte"},
		{&api.FieldError{Field: "cpus", Message: `"x" is not a quantity`}, `--cpus: "x" is not a quantity`},
		{&api.FieldError{Field: "resources.nvidia.com/gpu", Message: "GPUs are requested with gpus"}, "--resource nvidia.com/gpu: GPUs are requested with gpus"},
		{errors.New("plain"), "plain"},
	} {
		if got := flagMessage(tt.err); got != tt.want {
			t.Errorf("flagMessage(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestWriteNodesTable prints nodes the real server never lists (its nodes
// have one GPU type each; heartbeats are recent) with a fixed clock; the
// nodes of a real service are TestNodesOutput's.
func TestWriteNodesTable(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var b strings.Builder
	err := writeNodesTable(&b, []api.Node{
		{Name: "n0", State: api.NodeReady, GPUsUsed: 1, LastHeartbeat: now.Add(-90 * time.Second),
			GPUs: []api.GPU{{Index: 0, Type: "v100"}, {Index: 1, Type: "v100"}, {Index: 2, Type: "k80"}}},
		{Name: "n1\tx", State: api.NodeDown, LastHeartbeat: now.Add(-2*time.Hour - 5*time.Minute), GPUs: []api.GPU{{Index: 0, Type: "h100"}}},
		{Name: "n2", State: api.NodeReady},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"NAME STATE GPUS USED TYPE LAST-HEARTBEAT",
		"n0 ready 3 1 v100=2,k80=1 1m ago",
		"n1?x down 1 0 h100 2h5m ago",
		"n2 ready 0 0 - -",
	}
	if len(lines) != len(want) {
		t.Fatalf("table:\n%s", b.String())
	}
	for i := range want {
		if got := strings.Join(strings.Fields(lines[i]), " "); got != want[i] {
			t.Errorf("line %d: %q, want %q", i, got, want[i])
		}
	}
}

// TestResourceColumns: used and free CPU and memory, named resources as
// NAME=USED/FREE, "-" for what a node does not report.
func TestResourceColumns(t *testing.T) {
	for _, c := range []struct {
		n    api.Node
		want string
	}{
		{api.Node{}, "- - - - -"},
		{api.Node{Capacity: map[string]string{"cpu": "8"}}, "0 8 - - -"},
		{api.Node{Capacity: map[string]string{"cpu": "8", "memory": "32Gi", "rdma/hca": "4", "a": "1"},
			Used: map[string]string{"cpu": "2500m", "memory": "1Gi", "rdma/hca": "1"}}, "2500m 5500m 1Gi 31Gi a=0/1,rdma/hca=1/3"},
		{api.Node{Capacity: map[string]string{"cpu": "4"}, Used: map[string]string{"cpu": "6"}}, "6 -2 - - -"},
		{api.Node{Capacity: map[string]string{"cpu": "x"}}, "? ? ? ? ?"},
	} {
		if got := strings.ReplaceAll(resourceColumns(c.n), "\t", " "); got != c.want {
			t.Errorf("%+v: %q, want %q", c.n, got, c.want)
		}
	}
}
