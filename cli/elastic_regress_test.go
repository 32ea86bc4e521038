package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/internal/assets"
	"github.com/gpusched/gpusched/sim/synth"
)

// TestElasticGavelTracesAudit is issue 13's reproduction, kept as a
// regression test: 300 jobs drawn from the embedded Gavel matrix, every
// one elastic (half to twice its drawn GPUs), arriving about every 700 s
// on 16 V100s, 16 P100s and 16 K80s under fifo. The fulfillment scaler
// used to grow jobs onto GPU counts with a 0 matrix entry: their finish
// times overflowed to about -9.2e15 s, 12 jobs vanished and sim exited 0.
// For 20 seeds and every scaler the log must pass the audit (which
// auditedSim checks, and sim itself) with every job finished.
func TestElasticGavelTracesAudit(t *testing.T) {
	if testing.Short() {
		t.Skip("60 simulations of 300 jobs")
	}
	m, err := profile.ParseMatrix("embedded", assets.Throughputs())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for seed := uint64(1); seed <= 20; seed++ {
		jobs, err := synth.Generate(m, synth.Options{Jobs: 300, Rate: 3600.0 / 700, Seed: seed, Elastic: 1})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := synth.WriteJSONL(&b, jobs); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("elastic-%d.jsonl", seed))
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, sc := range []string{"none", "threshold", "fulfillment"} {
			t.Run(fmt.Sprintf("seed %d %s", seed, sc), func(t *testing.T) {
				out, _, res := auditedSim(t, "--trace", path, "--format", "jsonl", "--gpus", "v100=16,p100=16,k80=16",
					"--policy", "fifo", "--scaler", sc)
				var sum struct{ Jobs, Completed int }
				if err := json.Unmarshal([]byte(out), &sum); err != nil {
					t.Fatal(err)
				}
				if sum.Jobs != 300 || sum.Completed != 300 || res.Completed != 300 {
					t.Errorf("%d of %d jobs completed (log: %d), want all 300", sum.Completed, sum.Jobs, res.Completed)
				}
			})
		}
	}
}
