package confine

import (
	"os/exec"
	"strconv"
	"testing"
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

// BenchmarkStart measures starting `true` in a box and waiting for it,
// against starting it plainly (plain).
func BenchmarkStart(b *testing.B) {
	h := host(b)
	box, err := h.Create("bench-start", Limits{Pids: 1024})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = box.Remove() })
	for _, boxed := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "box"}[boxed], func(b *testing.B) {
			for range b.N {
				cmd := exec.Command("true")
				start := cmd.Start
				if boxed {
					start = func() error { return box.Start(cmd) }
				}
				if err := start(); err != nil {
					b.Fatal(err)
				}
				_ = cmd.Wait()
			}
		})
	}
}
