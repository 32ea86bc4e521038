package scheduler

import (
	"github.com/gpusched/gpusched/service/settings"

	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestPruneJobs: of four jobs, three cancelled two hours ago (j1, j2, j4)
// and one still queued (j3), PruneJobs with a one-hour cutoff deletes the
// three ended ones — records, log directories, memory — and keeps j3. A
// scheduler restarted on the same store numbers the next job j5, not j4:
// the highest pruned number is kept apart from the jobs.
func TestPruneJobs(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h := newHarness(t, func(c *settings.Config) { c.Clock = clock })
	for range 4 {
		h.submit(`{"command":["x"],"gpus":1}`)
	}
	for _, id := range []string{"j1", "j2", "j4"} {
		h.cancel(id)
		if err := os.MkdirAll(filepath.Join(h.dir, "logs", id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.dir, "logs", id, id+".1.0.log"), []byte("out\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	now = now.Add(30 * time.Minute)
	mu.Unlock()
	if ids, err := h.s.PruneJobs(context.Background(), now.Add(-time.Hour)); err != nil || len(ids) != 0 {
		t.Fatalf("half an hour after: pruned %v, %v; want none", ids, err)
	}
	mu.Lock()
	now = now.Add(90 * time.Minute)
	mu.Unlock()
	ids, err := h.s.PruneJobs(context.Background(), now.Add(-time.Hour))
	if err != nil || !slices.Equal(ids, []string{"j1", "j2", "j4"}) {
		t.Fatalf("pruned %v, %v; want j1, j2, j4", ids, err)
	}
	for _, id := range ids {
		if _, ok := h.stored(id); ok {
			t.Errorf("%s still in the store", id)
		}
		if _, err := h.s.Job(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want not found", id, err)
		}
		if _, err := os.Stat(filepath.Join(h.dir, "logs", id)); !os.IsNotExist(err) {
			t.Errorf("%s's logs: %v, want removed", id, err)
		}
	}
	if j := h.job("j3"); j.State != "queued" {
		t.Errorf("j3 is %s, want still queued", j.State)
	}
	h.restart()
	if j := h.submit(`{"command":["x"],"gpus":1}`); j.ID != "j5" {
		t.Errorf("after a restart the next job is %s, want j5 (j4 was pruned, its ID is not given again)", j.ID)
	}
	if got := len(h.s.Jobs()); got != 2 {
		t.Errorf("%d jobs after the restart, want j3 and j5", got)
	}
}
