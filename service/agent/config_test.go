package agent

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/service/api"
)

func TestNewChecksConfig(t *testing.T) {
	gpus := []api.GPU{{Index: 0, Type: "v100"}}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no server", Config{GPUs: gpus}, "server URL"},
		{"bad scheme", Config{Server: "ftp://x", GPUs: gpus}, "server URL"},
		{"no host", Config{Server: "http://", GPUs: gpus}, "server URL"},
		{"bad name", Config{Server: "http://h:1", Name: "a:b", GPUs: gpus}, `node name "a:b"`},
		{"bad addr", Config{Server: "http://h:1", Name: "a", Addr: "x y", GPUs: gpus}, "node address"},
		{"no GPUs", Config{Server: "http://h:1", Name: "a"}, "0 GPUs"},
		{"mixed GPUs", Config{Server: "http://h:1", Name: "a", GPUs: append(gpus, api.GPU{Index: 1, Type: "k80"})}, "one GPU type"},
		{"twice", Config{Server: "http://h:1", Name: "a", GPUs: append(gpus, gpus[0])}, "given twice"},
		{"bad confine", Config{Server: "http://h:1", Name: "a", GPUs: gpus, Confine: 7}, "confine 7"},
		{"negative memory", Config{Server: "http://h:1", Name: "a", GPUs: gpus, DefaultMemory: -1}, "default memory -1"},
	}
	for _, tt := range tests {
		tt.cfg.DataDir = t.TempDir()
		_, err := New(tt.cfg)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig mentioning %q", tt.name, err, tt.want)
		}
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	a, err := New(Config{Server: "http://h:1/", Name: "n7", GPUs: gpus})
	if err != nil {
		t.Fatal(err)
	}
	if a.cfg.Addr != "n7" || a.cfg.Server != "http://h:1" || filepath.Base(a.DataDir()) != "agent-n7" {
		t.Errorf("defaults: addr %q server %q data %q", a.cfg.Addr, a.cfg.Server, a.DataDir())
	}
	if a.cfg.Confine != ConfineOff || a.cfg.PidsMax != DefaultPidsMax || a.cfg.DeviceDir != "/dev" {
		t.Errorf("defaults: confine %d pids max %d device dir %q", a.cfg.Confine, a.cfg.PidsMax, a.cfg.DeviceDir)
	}
}
