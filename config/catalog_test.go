package config

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

func TestCatalogIsValid(t *testing.T) {
	cat := Catalog()
	if _, err := model.NewCluster(cat, []model.Node{{Name: "n0", GPUs: 1}}); err != nil {
		t.Fatalf("catalog fails model rules: %v", err)
	}
	for _, g := range cat {
		if g.Name != strings.ToLower(g.Name) || checkTypeName(g.Name) != "" {
			t.Errorf("type name %q must be lower case and flag-safe", g.Name)
		}
	}
	for _, want := range []string{"k80", "p100", "v100", "v100m16", "v100m32", "t4", "a10", "a100", "a100-80", "h100"} {
		if _, ok := LookupType(want); !ok {
			t.Errorf("catalog lacks %s", want)
		}
	}
}

func TestCatalogIsFresh(t *testing.T) {
	a := Catalog()
	a[0].MemMiB = -1
	if b := Catalog(); b[0].MemMiB == -1 {
		t.Fatal("Catalog returned a shared slice")
	}
}

func TestLookupType(t *testing.T) {
	tests := []struct {
		name   string
		want   model.GPUType
		wantOK bool
	}{
		{"k80", model.GPUType{Name: "k80", MemMiB: 12288, TFLOPS: 4.37}, true},
		{"V100", model.GPUType{Name: "v100", MemMiB: 16384, TFLOPS: 15.7}, true},
		{"V100M32", model.GPUType{Name: "v100m32", MemMiB: 32768, TFLOPS: 15.7}, true},
		{"A100-80", model.GPUType{Name: "a100-80", MemMiB: 81920, TFLOPS: 19.5}, true},
		{"h100", model.GPUType{Name: "h100", MemMiB: 81920, TFLOPS: 67}, true},
		{"g2", model.GPUType{}, false},
		{"", model.GPUType{}, false},
	}
	for _, tt := range tests {
		got, ok := LookupType(tt.name)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("LookupType(%q) = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}
