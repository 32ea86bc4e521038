package agent

import (
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
