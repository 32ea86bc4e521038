package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpusched/gpusched/api"
)

// BenchmarkSubmitToStart measures, on a `gpusched dev` server over loopback,
// the time from sending POST /v1/jobs to the job's process running: the job
// is `touch FILE`, and the clock stops when FILE appears. It reports the
// median and 90th percentile over b.N sequential jobs.
func BenchmarkSubmitToStart(b *testing.B) {
	url := startDev(b, "v100=4")
	dir := b.TempDir()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		file := filepath.Join(dir, fmt.Sprint(i))
		body, _ := json.Marshal(api.JobSpec{Command: []string{"touch", file}, GPUs: 1})
		t0 := time.Now()
		r, err := http.Post(url+"/v1/jobs", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusCreated {
			b.Fatalf("submit: %d", r.StatusCode)
		}
		for {
			if _, err := os.Stat(file); err == nil {
				break
			}
			if time.Since(t0) > 30*time.Second {
				b.Fatalf("job %d never started", i)
			}
			time.Sleep(200 * time.Microsecond)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}
