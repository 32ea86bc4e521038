package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpusched/gpusched/service/shim"
)

// TestProgressFileReported runs a replica that writes its progress file:
// the agent reports the latest steps and checkpoint with its status, also
// those written just before the exit, and keeps them for an adopting
// agent.
func TestProgressFileReported(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", false)
	dir := t.TempDir()
	ta := startAgent(t, f.srv.URL, dir)
	r := replica("prog", `f="$GPUSCHED_PROGRESS_FILE"; echo steps=1 >> "$f"; echo "steps=2 checkpoint=1" >> "$f"
		echo steps=3 >> "$f"; while [ ! -e go ]; do sleep 0.01; done; echo '{"steps":4,"checkpoint":true}' >> "$f"`)
	f.setWork(nil, r)
	waitFor(t, "progress steps 3", func() bool {
		s, ok := f.statusOf(r.ID)
		return ok && s.Progress != nil && s.Progress.Steps == 3
	})
	s, _ := f.statusOf(r.ID)
	if p := s.Progress; p.CheckpointSteps != 2 || p.CheckpointAt == nil || p.At.Before(*p.CheckpointAt) {
		t.Fatalf("progress: %+v", p)
	}
	if err := os.WriteFile(filepath.Join(ta.replicaDir(r.ID), "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s = f.waitExited(t, r.ID)
	if p := s.Progress; p == nil || p.Steps != 4 || p.CheckpointSteps != 4 {
		t.Fatalf("progress with the exit: %+v", p)
	}
	ta.stop(t)
	var rec record
	if err := shim.ReadJSON(filepath.Join(ta.replicaDir(r.ID), recordFile), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Status.Progress == nil || rec.Status.Progress.CheckpointSteps != 4 || rec.ProgressFile.Offset == 0 {
		t.Errorf("record: progress %+v, file %+v", rec.Status.Progress, rec.ProgressFile)
	}
}
