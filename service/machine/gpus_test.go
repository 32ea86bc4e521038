package machine

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

func TestParseGPUs(t *testing.T) {
	tests := []struct {
		spec    string
		typ     string
		n       int
		mem     int
		wantErr string
	}{
		{spec: "v100=4", typ: "v100", n: 4, mem: 16384},
		{spec: " H200 = 8 ", typ: "h200", n: 8, mem: 141 * 1024},
		{spec: "a100-80=1", typ: "a100-80", n: 1, mem: 80 * 1024},
		{spec: "v100=2,V100=2", typ: "v100", n: 4, mem: 16384},
		{spec: "v100=64", typ: "v100", n: 64, mem: 16384},
		{spec: "", wantErr: "empty"},
		{spec: "v100", wantErr: "want TYPE=N"},
		{spec: "=4", wantErr: "missing GPU type"},
		{spec: "v1000=4", wantErr: `unknown GPU type "v1000" (known: a10, `},
		{spec: "v100=0", wantErr: "positive integer"},
		{spec: "v100=-1", wantErr: "positive integer"},
		{spec: "v100=x", wantErr: "positive integer"},
		{spec: "v100=65", wantErr: "more than 64 GPUs"},
		{spec: "v100=40,v100=40", wantErr: "more than 64 GPUs"},
		{spec: "v100=4,", wantErr: "stray comma"},
		{spec: "v100=4,k80=4", wantErr: "one GPU type, got v100 and k80"},
		{spec: "auto", wantErr: "want TYPE=N"},
	}
	for _, tt := range tests {
		gpus, err := ParseGPUs(tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseGPUs(%q) error = %v, want one containing %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseGPUs(%q): %v", tt.spec, err)
			continue
		}
		if len(gpus) != tt.n {
			t.Errorf("ParseGPUs(%q): %d GPUs, want %d", tt.spec, len(gpus), tt.n)
		}
		for i, g := range gpus {
			if want := (api.GPU{Index: i, Type: tt.typ, MemMiB: tt.mem}); g != want {
				t.Errorf("ParseGPUs(%q)[%d] = %+v, want %+v", tt.spec, i, g, want)
			}
		}
	}
}

func TestResolveGPUs(t *testing.T) {
	gpus, err := ResolveGPUs("k80=2")
	if err != nil || len(gpus) != 2 || gpus[1].Type != "k80" {
		t.Errorf("ResolveGPUs(k80=2) = %+v, %v", gpus, err)
	}
	gpus, err = ResolveGPUs("auto")
	if err != nil { // a machine with an NVIDIA driver
		if !errors.Is(err, ErrNoGPUs) || !strings.Contains(err.Error(), "--gpus TYPE=N") {
			t.Errorf("ResolveGPUs(auto) error %q: want ErrNoGPUs and a hint to declare GPUs", err)
		}
		return
	}
	if err := ValidateGPUs(gpus); err != nil || len(gpus) == 0 {
		t.Errorf("ResolveGPUs(auto) = %+v: %v", gpus, err)
	}
	t.Logf("discovered %+v", gpus)
}

func FuzzParseGPUs(f *testing.F) {
	for _, s := range []string{"v100=4", "h200=8", "v100=2,v100=2", "v100=4,k80=1", "", ",", "=", "v100=", "V100=64", "v100=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		gpus, err := ParseGPUs(spec)
		if err != nil {
			if gpus != nil {
				t.Errorf("ParseGPUs(%q) returned GPUs with error %v", spec, err)
			}
			return
		}
		if len(gpus) == 0 || len(gpus) > model.MaxGPUsPerNode {
			t.Fatalf("ParseGPUs(%q): %d GPUs", spec, len(gpus))
		}
		if err := ValidateGPUs(gpus); err != nil {
			t.Fatalf("ParseGPUs(%q) = %+v: %v", spec, gpus, err)
		}
		for i, g := range gpus {
			if g.Index != i || g.MemMiB <= 0 || g.Type != strings.ToLower(g.Type) {
				t.Fatalf("ParseGPUs(%q)[%d] = %+v", spec, i, g)
			}
		}
	})
}
