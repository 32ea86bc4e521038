package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/client"
)

// BenchmarkJobsETA measures what `gpusched jobs --eta` does — GET /v1/jobs
// and GET /v1/eta over loopback — with 1,000 queued jobs on 1,000 GPUs
// (125 nodes of 8 V100s, every GPU held by one of 1,000 running jobs).
// cold: a job is submitted and cancelled before every iteration (outside
// the timer), so every iteration pays for a fresh forecast, the live state
// simulated forward 21 times (the point forecast and 20 perturbed runs);
// warm: nothing changed since the last forecast, which is served again. Lengths are mixed: total steps at
// the matrix's speed, time limits, and none (the default length). The
// scheduling loop runs a round every second meanwhile (the service's
// default).
func BenchmarkJobsETA(b *testing.B) {
	h := newHarness(b, func(c *Config) { c.HeartbeatTimeout, c.Round = time.Hour, time.Second })
	for i := range 125 {
		h.agent(fmt.Sprintf("n%03d", i), "v100", 8).register()
	}
	specs := []string{
		`{"command":["x"],"gpus":1,"time_limit_s":%d,"user":"u%d"}`,
		`{"command":["x"],"gpus":1,"total_steps":%d,"model":"ResNet-50 (batch size 64)","user":"u%d"}`,
		`{"command":["x"],"gpus":1,"user":"u%d%.0d"}`,
	}
	for i := range 2000 {
		spec := specs[i%3]
		switch i % 3 {
		case 2:
			h.submit(fmt.Sprintf(spec, i%10, 0))
		default:
			h.submit(fmt.Sprintf(spec, 600+(i*37)%3000, i%10))
		}
	}
	c, err := client.New(h.http.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for {
		running, err := c.Jobs(ctx, api.Running)
		if err != nil {
			b.Fatal(err)
		}
		if len(running) == 1000 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d jobs running, want 1000", len(running))
		}
		time.Sleep(50 * time.Millisecond)
	}
	list := func(b *testing.B) {
		jobs, err := c.Jobs(ctx, "")
		if err != nil {
			b.Fatal(err)
		}
		etas, err := c.ETAs(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(jobs) < 2000 || len(etas) != 2000 || etas[1999].PredictedStart == nil {
			b.Fatalf("%d jobs, %d forecasts, the last %+v", len(jobs), len(etas), etas[len(etas)-1])
		}
	}
	change := func(b *testing.B) {
		j, err := c.Submit(ctx, api.JobSpec{Command: []string{"x"}, GPUs: 1})
		if err == nil {
			_, err = c.Cancel(ctx, j.ID)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			b.StopTimer()
			change(b) // the last forecast is stale
			b.StartTimer()
			list(b)
		}
	})
	b.Run("warm", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			b.StopTimer()
			change(b)
			list(b) // a forecast of the state as it is now
			b.StartTimer()
			list(b)
		}
	})
}
