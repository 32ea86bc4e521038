package membership_test

import (
	"fmt"
	"testing"

	"github.com/gpusched/gpusched/core/membership"
)

// bigAlloc returns 8 GPUs on each of hosts first..first+n-1.
func bigAlloc(first, n int) []membership.Slot {
	var out []membership.Slot
	for h := first; h < first+n; h++ {
		for g := range 8 {
			out = append(out, membership.Slot{Host: fmt.Sprintf("node-%03d", h), GPU: g})
		}
	}
	return out
}

// BenchmarkNext moves a 1,024-GPU job on 128 hosts to a new allocation:
// "resize" drops the master host, shrinks another by 2 GPUs and adds a new
// host; "noop" passes the same slots again.
func BenchmarkNext(b *testing.B) {
	m, err := membership.New("big", bigAlloc(0, 128))
	if err != nil {
		b.Fatal(err)
	}
	resize := bigAlloc(1, 128)                  // node-001 .. node-128
	resize = append(resize[:8], resize[10:]...) // node-001 loses GPUs 0 and 1
	for _, tt := range []struct {
		name  string
		alloc []membership.Slot
	}{{"resize", resize}, {"noop", bigAlloc(0, 128)}} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := m.Next(tt.alloc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEnvAll builds the environment of all 1,024 processes of a
// 128-host job, as the service does on every generation.
func BenchmarkEnvAll(b *testing.B) {
	m, err := membership.New("big", bigAlloc(0, 128))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, h := range m.Hosts {
			for local := range h.GPUs {
				if _, err := m.Env(h.Name, local, 29500); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
