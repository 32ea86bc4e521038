package cli

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/service/agent"
)

func TestConfineOptions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		o       confineOptions
		want    agent.Config
		wantErr string
	}{
		{"defaults", confineOptions{mode: "auto", pidsMax: agent.DefaultPidsMax, deviceDir: "/dev"},
			agent.Config{Confine: agent.ConfineAuto, PidsMax: agent.DefaultPidsMax, DeviceDir: "/dev"}, ""},
		{"require, a default memory", confineOptions{mode: "require", defaultMemory: "16Gi", pidsMax: 64, deviceDir: "/tmp/dev"},
			agent.Config{Confine: agent.ConfineRequire, DefaultMemory: 16 << 30, PidsMax: 64, DeviceDir: "/tmp/dev"}, ""},
		{"off", confineOptions{mode: "off", pidsMax: 1, deviceDir: "/dev"}, agent.Config{Confine: agent.ConfineOff, PidsMax: 1, DeviceDir: "/dev"}, ""},
		{"bad mode", confineOptions{mode: "maybe", pidsMax: 1}, agent.Config{}, `--confine "maybe"`},
		{"bad memory", confineOptions{mode: "auto", defaultMemory: "lots", pidsMax: 1}, agent.Config{}, `--default-memory "lots"`},
		{"zero memory", confineOptions{mode: "auto", defaultMemory: "0", pidsMax: 1}, agent.Config{}, `--default-memory "0"`},
		{"no tasks", confineOptions{mode: "auto", pidsMax: 0}, agent.Config{}, "--pids-max 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cfg agent.Config
			err := tt.o.apply(&cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("apply = %v, want an error mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Confine != tt.want.Confine || cfg.DefaultMemory != tt.want.DefaultMemory || cfg.PidsMax != tt.want.PidsMax ||
				cfg.DeviceDir != tt.want.DeviceDir {
				t.Errorf("apply: %+v, want %+v", cfg, tt.want)
			}
		})
	}
}
