package server

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// BenchmarkSubmitAuth is BenchmarkSubmit with authentication on: every
// submission carries a user's token, verified against the store, and is
// recorded in the audit log before the 201 (issue 18).
func BenchmarkSubmitAuth(b *testing.B) {
	h := newHarness(b, withAuth)
	alice := h.newToken(h.adminToken(), api.TokenRequest{User: "alice"})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * benchClients}}
	defer client.CloseIdleConnections()
	body := []byte(`{"name":"bench","command":["python","train.py","--epochs","90"],"env":{"DATA":"/data/imagenet"},` +
		`"gpus":4,"min_gpus":2,"max_gpus":8,"model":"ResNet-50 (batch size 64)"}`)
	url := h.http.URL + "/v1/jobs"
	b.SetParallelism((benchClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+alice.Token)
			resp, err := client.Do(req)
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
}
