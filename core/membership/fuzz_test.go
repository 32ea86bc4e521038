package membership_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/gpusched/gpusched/core/membership"
)

// decode turns each byte into one slot: the top 3 bits pick one of 8 hosts,
// the low 5 bits the GPU index. Duplicate slots are kept on purpose.
func decode(data []byte) []membership.Slot {
	out := make([]membership.Slot, len(data))
	for i, b := range data {
		out[i] = membership.Slot{Host: "h" + strconv.Itoa(int(b>>5)), GPU: int(b & 31)}
	}
	return out
}

// wantErr is the error that New or Next must return for alloc (nil if none).
func wantErr(alloc []membership.Slot) error {
	if len(alloc) == 0 {
		return membership.ErrEmptyAllocation
	}
	seen := map[membership.Slot]bool{}
	for _, s := range alloc {
		if seen[s] {
			return membership.ErrDuplicateSlot
		}
		seen[s] = true
	}
	return nil
}

// FuzzNext builds a membership from the first allocation, then moves it to
// the second and third, checking the invariants at every step.
func FuzzNext(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 32, 33}, []byte{0, 1, 2, 3, 32, 33, 64}, []byte{32, 33, 64, 65})
	f.Add([]byte{0, 1, 2, 3}, []byte{0, 2, 3}, []byte{3, 2, 0})
	f.Add([]byte{0, 0}, []byte{}, []byte{1})
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		m, err := membership.New("j", decode(a))
		if want := wantErr(decode(a)); !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Fatalf("New: err = %v, want %v", err, want)
		}
		if err != nil {
			return
		}
		if msg := invariants(m, decode(a)); msg != "" {
			t.Fatalf("New(%v): %s", decode(a), msg)
		}
		for _, step := range [][]byte{b, b, c} {
			alloc := decode(step)
			next, err := m.Next(alloc)
			if want := wantErr(alloc); !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Fatalf("Next: err = %v, want %v", err, want)
			}
			if err != nil {
				continue
			}
			if msg := invariants(next, alloc); msg != "" {
				t.Fatalf("Next(%v) after %+v: %s", alloc, m, msg)
			}
			if msg := stable(m, next); msg != "" {
				t.Fatalf("Next(%v) after %+v gave %+v: %s", alloc, m, next, msg)
			}
			m = next
		}
	})
}

// invariants checks that m holds exactly alloc's slots and that its
// environments give every rank 0..world-1 exactly once, in Slots order.
func invariants(m membership.Membership, alloc []membership.Slot) string {
	if err := m.Validate(); err != nil {
		return err.Error()
	}
	got := m.Slots()
	if !sameSet(got, alloc) {
		return fmt.Sprintf("slots %v, want the set %v", got, alloc)
	}
	world := m.WorldSize()
	seen := make([]bool, world)
	for _, h := range m.Hosts {
		for local := range h.GPUs {
			env, err := m.Env(h.Name, local, 29500)
			if err != nil {
				return err.Error()
			}
			rank, err := strconv.Atoi(env["RANK"])
			if err != nil || rank < 0 || rank >= world || seen[rank] {
				return fmt.Sprintf("%s local %d: RANK %q invalid or repeated", h.Name, local, env["RANK"])
			}
			seen[rank] = true
			if got[rank] != (membership.Slot{Host: h.Name, GPU: h.GPUs[local]}) {
				return fmt.Sprintf("rank %d is %v in Slots, %s/%d in Env", rank, got[rank], h.Name, h.GPUs[local])
			}
			if env["WORLD_SIZE"] != strconv.Itoa(world) || env["MASTER_ADDR"] != m.Hosts[0].Name {
				return fmt.Sprintf("%s local %d: bad WORLD_SIZE or MASTER_ADDR: %v", h.Name, local, env.Pairs())
			}
		}
	}
	return ""
}

// stable checks the resize rules between prev and next.
func stable(prev, next membership.Membership) string {
	changed := !sameSet(prev.Slots(), next.Slots())
	switch {
	case changed && next.Generation != prev.Generation+1:
		return fmt.Sprintf("changed but generation %d → %d", prev.Generation, next.Generation)
	case !changed && next.Generation != prev.Generation:
		return fmt.Sprintf("unchanged but generation %d → %d", prev.Generation, next.Generation)
	case !changed && !slices.EqualFunc(prev.Hosts, next.Hosts, func(a, b membership.Host) bool {
		return a.Name == b.Name && slices.Equal(a.GPUs, b.GPUs)
	}):
		return "unchanged slots but a different order"
	}
	old := map[string]membership.Host{}
	for _, h := range prev.Hosts {
		old[h.Name] = h
	}
	var kept []string
	newSeen := false
	for _, h := range next.Hosts {
		o, ok := old[h.Name]
		if !ok {
			newSeen = true
			continue
		}
		if newSeen {
			return fmt.Sprintf("staying host %s after a new host", h.Name)
		}
		kept = append(kept, h.Name)
		for r, gpu := range o.GPUs {
			if r < len(h.GPUs) && slices.Contains(h.GPUs, gpu) && h.GPUs[r] != gpu {
				return fmt.Sprintf("%s/%d moved from local rank %d", h.Name, gpu, r)
			}
		}
	}
	var prevOrder []string
	for _, h := range prev.Hosts {
		if slices.Contains(kept, h.Name) {
			prevOrder = append(prevOrder, h.Name)
		}
	}
	if !slices.Equal(kept, prevOrder) {
		return fmt.Sprintf("staying hosts reordered: %v, was %v", kept, prevOrder)
	}
	return ""
}

// sameSet reports whether a and b hold the same slots (b may repeat none).
func sameSet(a, b []membership.Slot) bool {
	if len(a) != len(b) {
		return false
	}
	set := make(map[membership.Slot]bool, len(a))
	for _, s := range a {
		set[s] = true
	}
	for _, s := range b {
		if !set[s] {
			return false
		}
	}
	return len(set) == len(a)
}
