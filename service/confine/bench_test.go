package confine

import (
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// BenchmarkCreate measures making a box with every limit and the device
// rules of one GPU, and removing it.
func BenchmarkCreate(b *testing.B) {
	h := host(b)
	dir := fakeGPUs(b, 4)
	for i := range b.N {
		rules, err := DeviceRules(dir, []int{1})
		if err != nil {
			b.Fatal(err)
		}
		box, err := h.Create("bench-"+strconv.Itoa(i), Limits{CPUMillis: 1000, MemoryBytes: 1 << 30, Pids: 1024, Devices: rules})
		if err != nil {
			b.Fatal(err)
		}
		if err := box.Remove(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStart measures starting `true` and waiting for it: plainly
// (plain), in a box of this host's cgroups (host: on v1 the caller steps
// into the box and out), and cloned into a cgroup2 directory (clone-v2:
// CLONE_INTO_CGROUP, on /sys/fs/cgroup or the hybrid mount). Starts are 50
// ms apart, as an agent's are, with the timer stopped in between: moving a
// process into a v1 cgroup waits for an RCU grace period unless another
// move just did.
func BenchmarkStart(b *testing.B) {
	h := host(b)
	box, err := h.Create("bench-start", Limits{Pids: 1024})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = box.Remove() })
	v2 := Box{Version: V2, Paths: map[string]string{"": unifiedDir(b)}}
	for _, v := range []struct {
		name string
		box  *Box
	}{{"plain", nil}, {"host-" + h.Version.String()[len("cgroup "):], &box}, {"clone-v2", &v2}} {
		b.Run(v.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				time.Sleep(50 * time.Millisecond)
				b.StartTimer()
				cmd := exec.Command("true")
				start := cmd.Start
				if v.box != nil {
					start = func() error { return v.box.Start(cmd) }
				}
				if err := start(); err != nil {
					b.Fatal(err)
				}
				_ = cmd.Wait()
			}
		})
	}
}
