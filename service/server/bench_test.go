package server

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// benchClients is the number of concurrent HTTP clients of BenchmarkSubmit.
const benchClients = 32

// BenchmarkSubmit measures acknowledged durable submissions per second:
// 32 concurrent HTTP clients (keep-alive) POST /v1/jobs to a server on a
// real bbolt store in a temporary directory, over loopback, while the
// scheduling loop runs (no node: nothing starts).
func BenchmarkSubmit(b *testing.B) {
	h := newHarness(b, nil)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * benchClients}}
	defer client.CloseIdleConnections()
	body := []byte(`{"name":"bench","command":["python","train.py","--epochs","90"],"env":{"DATA":"/data/imagenet"},` +
		`"gpus":4,"min_gpus":2,"max_gpus":8,"model":"ResNet-50 (batch size 64)","user":"alice"}`)
	url := h.http.URL + "/v1/jobs"
	b.SetParallelism((benchClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "submits/s")
	if n := h.storedJobs(); n != b.N {
		b.Errorf("%d jobs stored, %d acknowledged", n, b.N)
	}
	stats := h.st.Stats()
	b.ReportMetric(float64(stats.Requests)/float64(max(stats.Commits, 1)), "writes/commit")
}
