package membership_test

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/membership"
)

// slots parses "host/gpu" words, e.g. slots("a/0 a/1 b/3").
func slots(t testing.TB, s string) []membership.Slot {
	t.Helper()
	var out []membership.Slot
	for _, w := range strings.Fields(s) {
		host, gpu, _ := strings.Cut(w, "/")
		n, err := strconv.Atoi(gpu)
		if err != nil {
			t.Fatalf("bad slot %q: %v", w, err)
		}
		out = append(out, membership.Slot{Host: host, GPU: n})
	}
	return out
}

func TestNew(t *testing.T) {
	tests := []struct {
		name  string
		job   string
		alloc []membership.Slot
		want  []membership.Host
		err   error
	}{
		{name: "one host", job: "j", alloc: slots(t, "a/0 a/1"),
			want: []membership.Host{{Name: "a", GPUs: []int{0, 1}}}},
		{name: "first appearance orders hosts, GPUs sorted", job: "j", alloc: slots(t, "b/3 a/1 b/0 a/0"),
			want: []membership.Host{{Name: "b", GPUs: []int{0, 3}}, {Name: "a", GPUs: []int{0, 1}}}},
		{name: "empty job", job: "", alloc: slots(t, "a/0"), err: membership.ErrEmptyJob},
		{name: "empty allocation", job: "j", alloc: nil, err: membership.ErrEmptyAllocation},
		{name: "empty host", job: "j", alloc: []membership.Slot{{Host: "", GPU: 0}}, err: membership.ErrBadHost},
		{name: "colon in host", job: "j", alloc: []membership.Slot{{Host: "a:1", GPU: 0}}, err: membership.ErrBadHost},
		{name: "comma in host", job: "j", alloc: []membership.Slot{{Host: "a,b", GPU: 0}}, err: membership.ErrBadHost},
		{name: "space in host", job: "j", alloc: []membership.Slot{{Host: "a b", GPU: 0}}, err: membership.ErrBadHost},
		{name: "newline in host", job: "j", alloc: []membership.Slot{{Host: "a\n", GPU: 0}}, err: membership.ErrBadHost},
		{name: "negative GPU", job: "j", alloc: []membership.Slot{{Host: "a", GPU: -1}}, err: membership.ErrBadGPU},
		{name: "same slot twice", job: "j", alloc: slots(t, "a/0 b/0 a/0"), err: membership.ErrDuplicateSlot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := membership.New(tt.job, tt.alloc)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := membership.Membership{Job: tt.job, Generation: 1, Hosts: tt.want}
			if !reflect.DeepEqual(m, want) {
				t.Fatalf("got %+v, want %+v", m, want)
			}
		})
	}
}

func TestBadHostErrorNamesHost(t *testing.T) {
	_, err := membership.New("j", []membership.Slot{{Host: "node:7", GPU: 0}})
	if err == nil || !strings.Contains(err.Error(), `"node:7"`) {
		t.Fatalf("err = %v, want it to name the host", err)
	}
}

func TestNextKeepsLocalRanks(t *testing.T) {
	tests := []struct {
		name string
		old  []int
		now  string
		want []int
	}{
		{name: "unchanged", old: []int{3, 1, 2}, now: "h/1 h/2 h/3", want: []int{3, 1, 2}},
		{name: "grow appends new GPUs", old: []int{0, 1}, now: "h/5 h/0 h/4 h/1", want: []int{0, 1, 4, 5}},
		{name: "lose a middle GPU: the last fills its rank", old: []int{0, 1, 2, 3}, now: "h/0 h/2 h/3", want: []int{0, 3, 2}},
		{name: "lose the last GPU", old: []int{0, 1, 2, 3}, now: "h/0 h/1 h/2", want: []int{0, 1, 2}},
		{name: "new GPU fills the hole first", old: []int{0, 1, 2, 3}, now: "h/0 h/2 h/3 h/6", want: []int{0, 6, 2, 3}},
		{name: "new GPUs before moved GPUs", old: []int{0, 1, 2, 3}, now: "h/3 h/7 h/2", want: []int{7, 3, 2}},
		{name: "all GPUs replaced", old: []int{0, 1}, now: "h/4 h/5 h/6", want: []int{4, 5, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := membership.Membership{Job: "j", Generation: 4, Hosts: []membership.Host{{Name: "h", GPUs: tt.old}}}
			next, err := m.Next(slots(t, tt.now))
			if err != nil {
				t.Fatal(err)
			}
			if got := next.Hosts[0].GPUs; !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("GPUs = %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(m.Hosts[0].GPUs, tt.old) {
				t.Fatalf("Next modified its receiver: %v", m.Hosts[0].GPUs)
			}
		})
	}
}

func TestNextErrors(t *testing.T) {
	valid := membership.Membership{Job: "j", Generation: 1, Hosts: []membership.Host{{Name: "a", GPUs: []int{0}}}}
	tests := []struct {
		name  string
		m     membership.Membership
		alloc []membership.Slot
		err   error
	}{
		{name: "zero membership", m: membership.Membership{}, alloc: slots(t, "a/0"), err: membership.ErrInvalid},
		{name: "generation 0", m: membership.Membership{Job: "j", Hosts: valid.Hosts}, alloc: slots(t, "a/0"), err: membership.ErrInvalid},
		{name: "host without GPUs", m: membership.Membership{Job: "j", Generation: 1, Hosts: []membership.Host{{Name: "a"}}},
			alloc: slots(t, "a/0"), err: membership.ErrInvalid},
		{name: "host twice", m: membership.Membership{Job: "j", Generation: 1, Hosts: []membership.Host{{Name: "a", GPUs: []int{0}}, {Name: "a", GPUs: []int{1}}}},
			alloc: slots(t, "a/0"), err: membership.ErrDuplicateSlot},
		{name: "GPU twice", m: membership.Membership{Job: "j", Generation: 1, Hosts: []membership.Host{{Name: "a", GPUs: []int{1, 1}}}},
			alloc: slots(t, "a/0"), err: membership.ErrDuplicateSlot},
		{name: "empty allocation", m: valid, alloc: nil, err: membership.ErrEmptyAllocation},
		{name: "duplicate slot", m: valid, alloc: slots(t, "a/0 a/0"), err: membership.ErrDuplicateSlot},
		{name: "bad host", m: valid, alloc: []membership.Slot{{Host: "a\tb", GPU: 0}}, err: membership.ErrBadHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.m.Next(tt.alloc); !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
		})
	}
}

func TestHostListAndSlots(t *testing.T) {
	m := membership.Membership{Job: "j", Generation: 2, Hosts: []membership.Host{
		{Name: "gpu-07", GPUs: []int{2, 0}}, {Name: "gpu-03", GPUs: []int{1}},
	}}
	if got, want := m.HostList(), "gpu-07:2\ngpu-03:1\n"; got != want {
		t.Errorf("HostList = %q, want %q", got, want)
	}
	if got := m.WorldSize(); got != 3 {
		t.Errorf("WorldSize = %d, want 3", got)
	}
	want := slots(t, "gpu-07/2 gpu-07/0 gpu-03/1")
	if got := m.Slots(); !reflect.DeepEqual(got, want) {
		t.Errorf("Slots = %v, want %v", got, want)
	}
	if s := want[0].String(); s != "gpu-07/2" {
		t.Errorf("Slot.String = %q", s)
	}
}
