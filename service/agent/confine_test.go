package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/confine"
)

func TestLimitsOf(t *testing.T) {
	dev := t.TempDir() // no device nodes: the base rules only
	tests := []struct {
		name    string
		cfg     Config
		limits  map[string]string
		want    confine.Limits // without Devices
		wantErr string
	}{
		{"nothing asked, no default", Config{PidsMax: 100}, nil, confine.Limits{Pids: 100}, ""},
		{"nothing asked, default memory", Config{PidsMax: 100, DefaultMemory: 1 << 30}, nil,
			confine.Limits{Pids: 100, MemoryBytes: 1 << 30}, ""},
		{"the job's CPUs and memory", Config{PidsMax: 100, DefaultMemory: 1 << 30}, map[string]string{"cpu": "1500m", "memory": "256Mi"},
			confine.Limits{Pids: 100, CPUMillis: 1500, MemoryBytes: 256 << 20}, ""},
		{"CPUs only: memory from the default", Config{PidsMax: 8, DefaultMemory: 2 << 30}, map[string]string{"cpu": "2"},
			confine.Limits{Pids: 8, CPUMillis: 2000, MemoryBytes: 2 << 30}, ""},
		{"unreadable", Config{PidsMax: 8}, map[string]string{"cpu": "lots"}, confine.Limits{}, "limits.cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.DeviceDir = dev
			a := &Agent{cfg: tt.cfg}
			got, err := a.limitsOf(api.Replica{ID: "j1.1.0", GPUs: []int{1}, Limits: tt.limits})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("limitsOf = %v, want an error mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Devices) == 0 || got.Devices[0].Allow {
				t.Errorf("device rules %v: want a list that starts by denying everything", got.Devices)
			}
			got.Devices = nil
			if got.CPUMillis != tt.want.CPUMillis || got.MemoryBytes != tt.want.MemoryBytes || got.Pids != tt.want.Pids {
				t.Errorf("limitsOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestOOMMessage(t *testing.T) {
	for _, tt := range []struct {
		box  confine.Box
		want string
	}{
		{confine.Box{Version: confine.V2, MemoryBytes: 256 << 20}, "out of memory (memory.max 256Mi)"},
		{confine.Box{Version: confine.V1, MemoryBytes: 16 << 30}, "out of memory (memory.limit_in_bytes 16Gi)"},
		{confine.Box{Version: confine.V2}, "out of memory"},
	} {
		if got := oomMessage(tt.box); got != tt.want {
			t.Errorf("oomMessage(%+v) = %q, want %q", tt.box, got, tt.want)
		}
	}
}

func TestShimCgroupNeedsItsRecord(t *testing.T) {
	dir := t.TempDir()
	_, err := parseShimArgs([]string{"--dir", dir, "--cgroup", "--", "true"})
	if err == nil || !strings.Contains(err.Error(), "no cgroup.json") {
		t.Errorf("--cgroup without cgroup.json: %v, want an error saying so", err)
	}
	if err := os.WriteFile(filepath.Join(dir, boxFile), []byte(`{"version":"v1","paths":{"memory":"../x"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseShimArgs([]string{"--dir", dir, "--cgroup", "--", "true"}); err == nil ||
		!strings.Contains(err.Error(), "not a clean absolute path") {
		t.Errorf("--cgroup with a relative cgroup path: %v, want it refused", err)
	}
	box := confine.Box{Version: confine.V1, Paths: map[string]string{"memory": "/sys/fs/cgroup/memory/gpusched/n1/j1.1.0"}, MemoryBytes: 1 << 20}
	if err := box.Save(filepath.Join(dir, boxFile)); err != nil {
		t.Fatal(err)
	}
	o, err := parseShimArgs([]string{"--dir", dir, "--cgroup", "--", "true"})
	if err != nil || o.box == nil || o.box.Paths["memory"] != box.Paths["memory"] || o.box.MemoryBytes != 1<<20 {
		t.Errorf("--cgroup: box %+v, %v; want the saved one", o.box, err)
	}
}

func TestBoxParentIsPerDataDir(t *testing.T) {
	a := &Agent{cfg: Config{Name: "n/1", DataDir: "/var/lib/a"}}
	b := &Agent{cfg: Config{Name: "n/1", DataDir: "/var/lib/b"}}
	pa, pb := a.boxParent(), b.boxParent()
	if pa == pb || !strings.HasPrefix(pa, "gpusched/n_1.") || strings.Count(pa, "/") != 1 {
		t.Errorf("box parents %q and %q: want gpusched/NODE.HASH, one per data directory", pa, pb)
	}
}

func TestDeviceNumbers(t *testing.T) {
	for _, tt := range []struct {
		minors map[int]int
		gpus   []int
		want   []int
	}{
		{nil, []int{0, 3}, []int{0, 3}},                           // no NVML: /dev/nvidiaN for index N
		{map[int]int{0: 2, 1: 0, 2: 1}, []int{0, 2}, []int{2, 1}}, // NVML's minors
		{map[int]int{0: 5}, []int{0, 1}, []int{5, 1}},             // an index NVML did not list
	} {
		a := &Agent{minors: tt.minors}
		if got := a.deviceNumbers(tt.gpus); !slices.Equal(got, tt.want) {
			t.Errorf("deviceNumbers(%v) with minors %v = %v, want %v", tt.gpus, tt.minors, got, tt.want)
		}
	}
}
