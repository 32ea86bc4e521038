package ledger

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// TestPrune: Prune deletes the records named and raises the sequence
// floor that ReadSeqFloor reads back (0 before any prune); a floor that is
// no job number is an error naming the key.
func TestPrune(t *testing.T) {
	ctx, now := context.Background(), time.Unix(1000, 0)
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "store.db"), store.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := ReadSeqFloor(ctx, st); n != 0 || err != nil {
		t.Fatalf("ReadSeqFloor of a new store = %d, %v", n, err)
	}
	if l := PruneLimit(st); l != pruneBatch {
		t.Errorf("PruneLimit of bbolt = %d, want %d", l, pruneBatch)
	}
	for _, id := range []string{"j1", "j2", "j3"} {
		r := NewRecord(id, api.JobSpec{Command: []string{"x"}, GPUs: 1}, nil, now)
		data, err := MarshalRecord(&r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, JobKey(id), data); err != nil {
			t.Fatal(err)
		}
	}
	if err := Prune(ctx, st, []string{"j1", "j2"}, 2); err != nil {
		t.Fatal(err)
	}
	jobs, err := ReadJobs(ctx, st)
	if err != nil || len(jobs) != 1 || jobs[0].ID != "j3" {
		t.Fatalf("jobs after the prune: %+v, %v; want j3", jobs, err)
	}
	if n, err := ReadSeqFloor(ctx, st); n != 2 || err != nil {
		t.Fatalf("ReadSeqFloor = %d, %v; want 2", n, err)
	}
	if _, err := st.Put(ctx, SeqKey, []byte(`"x"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSeqFloor(ctx, st); err == nil {
		t.Fatal("ReadSeqFloor of a floor that is no number: no error")
	}
	r := NewRecord("j4", api.JobSpec{}, nil, now)
	if !r.EndedAt().Equal(now) {
		t.Errorf("EndedAt without an end = %v, want the submission", r.EndedAt())
	}
	end := now.Add(time.Hour)
	r.FinishedAt = &end
	if !r.EndedAt().Equal(end) {
		t.Errorf("EndedAt = %v, want %v", r.EndedAt(), end)
	}
}
