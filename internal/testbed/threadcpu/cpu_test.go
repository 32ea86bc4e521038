package threadcpu

import (
	"runtime"
	"testing"
)

// TestNowCountsWork: a busy loop on the locked thread adds CPU time; a
// sleep on it adds (almost) none.
func TestNowCountsWork(t *testing.T) {
	defer Lock()()
	before, ok := Now()
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("Now reports no measurement on Linux")
		}
		t.Skip("no thread CPU time off Linux")
	}
	x := 0
	for i := range 20_000_000 {
		x += i & 7
	}
	after, _ := Now()
	if after <= before {
		t.Fatalf("a busy loop (%d) added no CPU time: %d then %d", x, before, after)
	}
}
