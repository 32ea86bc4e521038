package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestTableResources: the figures of a run on a cluster with resources
// besides GPUs, and what its reader left out, each on its own line.
func TestTableResources(t *testing.T) {
	s := sampleSummary()
	s.Queues = nil
	stranded, share, structural, skipped := 12.3456, 0.0123, 7, 4166
	s.ResourceUtil = map[string]float64{"memory": 0.25, "cpu": 0.5, "rdma/hca": 1}
	s.StrandedGPUs, s.StrandedGPUShare, s.StructuralStrandedGPUs = &stranded, &share, &structural
	s.Skipped, s.SkippedReasons = &skipped, map[string]int{"GPU-sharing (gpu_milli < 1000)": 3078, "CPU-only (num_gpu 0)": 1088}
	var b bytes.Buffer
	if err := Table(&b, s); err != nil {
		t.Fatal(err)
	}
	want := `energy                    1,234.568 kWh
skipped                   4,166
  3,078 × GPU-sharing (gpu_milli < 1000)
  1,088 × CPU-only (num_gpu 0)
cpu util                  50.0%
memory util               25.0%
rdma/hca util             100.0%
stranded GPUs             12.346
stranded GPU share        1.2%
structural stranded GPUs  7
`
	if got := b.String(); !strings.HasSuffix(got, want) {
		t.Errorf("table ends\n%s\nwant\n%s", got, want)
	}
	var j bytes.Buffer
	if err := JSON(&j, s); err != nil {
		t.Fatal(err)
	}
	wantJSON := `"skipped":4166,"skipped_reasons":{"CPU-only (num_gpu 0)":1088,"GPU-sharing (gpu_milli \u003c 1000)":3078},` +
		`"resource_util":{"cpu":0.5,"memory":0.25,"rdma/hca":1},"stranded_gpus":12.3456,"stranded_gpu_share":0.0123,"structural_stranded_gpus":7}`
	if !strings.HasSuffix(strings.TrimSpace(j.String()), wantJSON) {
		t.Errorf("JSON\n%s\nwant suffix\n%s", j.String(), wantJSON)
	}
}

// TestHTMLResourceRows: the HTML summary has a row per resource and the
// stranded figures when a run has them, and none of those rows otherwise.
func TestHTMLResourceRows(t *testing.T) {
	plain := Run{Name: "pack", Summary: sampleSummary()}
	keys := func(runs ...Run) string {
		var ks []string
		for _, r := range summaryRows(runs) {
			ks = append(ks, r.Key)
		}
		return strings.Join(ks, " ")
	}
	base := keys(plain)
	for _, k := range []string{"skipped", "stranded", "util cpu", "cpu_util"} {
		if strings.Contains(base, k) {
			t.Errorf("GPU-only rows hold %q: %s", k, base)
		}
	}
	vec := plain
	vec.Summary.ResourceUtil = map[string]float64{"cpu": 0.5}
	stranded := 1.5
	vec.Summary.StrandedGPUs = &stranded
	got := keys(plain, vec)
	for _, k := range []string{"cpu_util", "stranded_gpus"} {
		if !strings.Contains(got, k) {
			t.Errorf("rows lack %q: %s", k, got)
		}
	}
	if strings.Contains(got, "stranded_gpu_share") {
		t.Errorf("a figure no run has got a row: %s", got)
	}
}
