package ledger

import (
	"testing"

	"github.com/gpusched/gpusched/service/api"
)

// TestPickPort: the port is in the range and joins used; a second attempt
// on the same master gets another port; with one port left it gets that
// one.
func TestPickPort(t *testing.T) {
	rec := &Record{Job: api.Job{ID: "j7", Attempt: 2}}
	used := map[int]bool{}
	p := PickPort(rec, used, 29500, 4)
	if p < 29500 || p >= 29504 || !used[p] {
		t.Fatalf("PickPort = %d (used %v), want a port in [29500, 29504) marked used", p, used)
	}
	if q := PickPort(rec, used, 29500, 4); q == p || !used[q] {
		t.Fatalf("second PickPort = %d, want another than %d", q, p)
	}
	used = map[int]bool{29500: true, 29501: true, 29503: true}
	if got := PickPort(rec, used, 29500, 4); got != 29502 {
		t.Fatalf("PickPort with one port left = %d, want 29502", got)
	}
}
