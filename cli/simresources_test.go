package cli_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestSimClusterResources is issue 26's case in the simulator: one node
// with 4 GPUs and 4 CPUs (cluster file), three 1-GPU jobs that ask for 2
// CPUs each (jsonl cpus, memory) at 0 for 100 s. Two run at once; the
// third waits for a CPU until 100: average queue 100/3 s. The free GPUs
// strand: 0–100 two GPUs are free with no CPU left (2 stranded), 100–200
// three are free and 2 CPUs serve one (2 stranded): 2 over the makespan of
// 200 s, and 2 while c waits (0–100). CPU: 4 cores for 100 s, 2 for
// 100 s of 4 · 200: 0.75.
func TestSimClusterResources(t *testing.T) {
	dir := t.TempDir()
	cluster := filepath.Join(dir, "c.yaml")
	jobs := filepath.Join(dir, "j.jsonl")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(cluster, "nodes:\n  - {name: n, gpu_type: v100, gpus: 4, cpus: 4, memory: 64Gi}\n")
	write(jobs, `{"id":"a","submit_s":0,"gpus":1,"duration_s":100,"cpus":2,"memory":"8Gi"}`+"\n"+
		`{"id":"b","submit_s":0,"gpus":1,"duration_s":100,"cpus":"2000m","memory":"8Gi"}`+"\n"+
		`{"id":"c","submit_s":0,"gpus":1,"duration_s":100,"cpus":2,"memory":8589934592}`+"\n")
	for _, placer := range []string{"pack", "fit"} {
		out, _, _ := auditedSim(t, "--trace", jobs, "--cluster", cluster, "--placer", placer, "--sleep=false")
		s := decodeAlibaba(t, out)
		near := func(name string, got, want float64) {
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("%s: %s = %v, want %v\n%s", placer, name, got, want, out)
			}
		}
		near("avg queue", s.AvgQueue, 100.0/3)
		if s.Stranded == nil || s.Skipped != nil {
			t.Fatalf("%s: stranded %v, skipped %v\n%s", placer, s.Stranded, s.Skipped, out)
		}
		near("stranded GPUs", *s.Stranded, 2)
		if s.StrandedWaiting == nil {
			t.Fatalf("%s: no stranded_gpus_waiting\n%s", placer, out)
		}
		near("stranded GPUs while jobs wait", *s.StrandedWaiting, 2)
		near("cpu util", s.ResourceUtil["cpu"], 0.75)
	}
}
