package config

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

func TestParseAmount(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int64
		err      string
	}{
		{"cpu", "2", 2000, ""},
		{"cpu", "0.5", 500, ""},
		{"cpu", "500m", 500, ""},
		{"cpu", "1.0001", 0, "finer than a millicore"},
		{"memory", "64Gi", 64 << 30, ""},
		{"memory", "1M", 1000000, ""},
		{"memory", "1.5Ki", 1536, ""},
		{"memory", "0.5", 0, "not a whole number"},
		{"memory", "-1Gi", 0, "negative"},
		{"memory", "lots", 0, "not a quantity"},
		{"memory", "", 0, "empty"},
		{"rdma/hca", "4", 4, ""},
		{"pods", "1e20", 0, "too large"},
		{"cpu", "1e20", 0, "too large"},
	} {
		got, err := ParseAmount(tc.name, tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %q: err %v, want %q", tc.name, tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %q = %d, %v; want %d", tc.name, tc.in, got, err, tc.want)
		}
	}
}

func TestParseResourceList(t *testing.T) {
	r, err := ParseResourceList("cpu=2, memory=8Gi,rdma/hca=1")
	if err != nil {
		t.Fatal(err)
	}
	want := model.Resources{"cpu": 2000, "memory": 8 << 30, "rdma/hca": 1}
	if !r.Equal(want) {
		t.Fatalf("got %v, want %v", r, want)
	}
	if s := FormatResources(r); s != "cpu=2,memory=8Gi,rdma/hca=1" {
		t.Fatalf("format: %q", s)
	}
	for in, msg := range map[string]string{
		"cpu":            "NAME=AMOUNT",
		"cpu=1,cpu=2":    "given twice",
		"gpu=1":          "GPUs are requested with gpus",
		"a b=1":          "only letters",
		"memory=1Gi,x=y": "not a quantity",
	} {
		if _, err := ParseResourceList(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: err %v, want %q", in, err, msg)
		}
	}
}

func TestAmountFromFloat(t *testing.T) {
	if v, err := AmountFromFloat("cpu", 1.5); err != nil || v != 1500 {
		t.Fatalf("1.5 cores: %d %v", v, err)
	}
	if _, err := AmountFromFloat("memory", 1.5); err == nil {
		t.Fatal("fractional bytes accepted")
	}
	if _, err := AmountFromFloat("cpu", -1); err == nil {
		t.Fatal("negative accepted")
	}
}

func FuzzParseResourceList(f *testing.F) {
	for _, s := range []string{"cpu=2,memory=8Gi", "rdma/hca=1", "cpu=0.001", "memory=1e3Ki", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseResourceList(s)
		if err != nil {
			return
		}
		back, err := ParseResourceList(FormatResources(r))
		if err != nil || !back.Equal(r) {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, r, FormatResources(r), back, err)
		}
	})
}
