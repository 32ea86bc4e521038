package kube

import (
	"fmt"
	"testing"
	"time"
)

// TestRoundStreaming: pods arriving round after round, the bound ones
// coming back from the informer bound, are all placed while GPUs are free.
func TestRoundStreaming(t *testing.T) {
	s := testSched(t, "fifo", "pack")
	var objs []any
	for i := range 100 {
		objs = append(objs, mkNode(fmt.Sprintf("gpu-%03d", i), "Tesla-V100-SXM2-16GB", 8))
	}
	_, _ = feed(t, s, t0, objs...)
	bound := map[string]string{}
	now := t0
	for r := range 30 {
		now = now.Add(300 * time.Millisecond)
		var objs []any
		for name, node := range bound {
			p := mkPod(name, 1)
			p.Spec.NodeName = node
			objs = append(objs, p)
		}
		for k := range 10 {
			p := mkPod(fmt.Sprintf("p-%02d-%d", r, k), 1)
			p.CreationTimestamp.Time = now.Truncate(time.Second)
			objs = append(objs, p)
		}
		// A gang of 8 whose pods arrive over two rounds.
		want := 10
		for k := range 4 {
			g := r / 2
			p := mkPod(fmt.Sprintf("g-%02d-%d", g, k+4*(r%2)), 1, gang(fmt.Sprintf("g-%02d", g), 8))
			p.CreationTimestamp.Time = now.Truncate(time.Second)
			objs = append(objs, p)
		}
		if r%2 == 1 {
			want += 8
		}
		got, rd := feed(t, s, now, objs...)
		for name, node := range got {
			bound[name] = node
		}
		if len(got) != want {
			t.Fatalf("round %d: bound %d of %d new pods; %d bound so far; free %d", r, len(got), want, len(bound), rd.state.FreeGPUs())
		}
	}
}
