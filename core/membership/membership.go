package membership

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Error is the kind of an error returned by this package. Every error the
// package returns wraps one of the Err constants below.
type Error string

// Error returns the kind's text.
func (e Error) Error() string { return string(e) }

// The kinds of error returned by this package.
const (
	// ErrEmptyJob means the job id is empty.
	ErrEmptyJob Error = "empty job id"
	// ErrEmptyAllocation means the allocation holds no slot.
	ErrEmptyAllocation Error = "empty allocation"
	// ErrBadHost means a host name is empty or holds a forbidden character.
	ErrBadHost Error = "invalid host name"
	// ErrBadGPU means a GPU index is negative.
	ErrBadGPU Error = "invalid GPU index"
	// ErrDuplicateSlot means the same slot (or host) is given twice.
	ErrDuplicateSlot Error = "duplicate slot"
	// ErrUnknownHost means a host is not part of the membership.
	ErrUnknownHost Error = "host not in membership"
	// ErrLocalRank means a local rank is outside 0..LOCAL_WORLD_SIZE-1.
	ErrLocalRank Error = "local rank out of range"
	// ErrBadPort means a port is outside 1..65535.
	ErrBadPort Error = "port out of range"
	// ErrInvalid means a Membership value breaks its invariants (for
	// example one decoded from storage).
	ErrInvalid Error = "invalid membership"
)

// Slot is one GPU of an allocation: device index GPU on host Host.
type Slot struct {
	Host string
	GPU  int
}

// String returns the slot as "host/gpu", the form of the event log's alloc.
func (s Slot) String() string { return s.Host + "/" + strconv.Itoa(s.GPU) }

// Host is one host of a membership. GPUs holds the host's device indices in
// local-rank order: GPUs[r] is the device of local rank r.
type Host struct {
	Name string
	GPUs []int
}

// Membership is one generation of a job's membership: its hosts in node-rank
// order (Hosts[0] is the master). Generation starts at 1 and increases by one
// on every change.
type Membership struct {
	Job        string
	Generation int
	Hosts      []Host
}

// New returns generation 1 of job's membership on alloc. Hosts are ordered by
// their first appearance in alloc; a host's GPUs by device index.
func New(job string, alloc []Slot) (Membership, error) {
	if job == "" {
		return Membership{}, fmt.Errorf("new membership: %w", ErrEmptyJob)
	}
	g, err := group(alloc)
	if err != nil {
		return Membership{}, fmt.Errorf("new membership of job %q: %w", job, err)
	}
	hosts := make([]Host, len(g.order))
	for i, name := range g.order {
		gpus := g.gpus[name]
		slices.Sort(gpus)
		hosts[i] = Host{Name: name, GPUs: gpus}
	}
	return Membership{Job: job, Generation: 1, Hosts: hosts}, nil
}

// Next returns the membership that follows m on alloc, keeping hosts, node
// ranks and local ranks in place where it can (see the package doc). The
// generation is m's plus one if the set of slots changed, m's otherwise. m is
// not modified.
func (m Membership) Next(alloc []Slot) (Membership, error) {
	if err := m.Validate(); err != nil {
		return Membership{}, fmt.Errorf("next membership: %w", err)
	}
	g, err := group(alloc)
	if err != nil {
		return Membership{}, fmt.Errorf("next membership of job %q after generation %d: %w", m.Job, m.Generation, err)
	}
	hosts := make([]Host, 0, len(g.order))
	stayed := make(map[string]bool, len(m.Hosts))
	for _, h := range m.Hosts {
		gpus, ok := g.gpus[h.Name]
		if !ok {
			continue
		}
		stayed[h.Name] = true
		hosts = append(hosts, Host{Name: h.Name, GPUs: keepRanks(h.GPUs, gpus)})
	}
	for _, name := range g.order {
		if !stayed[name] {
			gpus := g.gpus[name]
			slices.Sort(gpus)
			hosts = append(hosts, Host{Name: name, GPUs: gpus})
		}
	}
	next := Membership{Job: m.Job, Generation: m.Generation, Hosts: hosts}
	if !slices.EqualFunc(m.Hosts, hosts, Host.equal) {
		next.Generation++
	}
	return next, nil
}

// keepRanks orders a staying host's new GPUs (now, in any order): a GPU keeps
// its old local rank when that rank is below len(now); the free ranks take
// the new GPUs in ascending order, then the GPUs whose old rank is too high,
// in their old order.
func keepRanks(old, now []int) []int {
	slices.Sort(now)
	sortedOld := slices.Sorted(slices.Values(old))
	k := len(now)
	out := make([]int, k)
	for r := range out {
		out[r] = -1
	}
	var rest []int
	for _, gpu := range now {
		if _, found := slices.BinarySearch(sortedOld, gpu); !found {
			rest = append(rest, gpu)
		}
	}
	for r, gpu := range old {
		if _, found := slices.BinarySearch(now, gpu); !found {
			continue
		}
		if r < k {
			out[r] = gpu
		} else {
			rest = append(rest, gpu)
		}
	}
	for r := range out {
		if out[r] < 0 {
			out[r], rest = rest[0], rest[1:]
		}
	}
	return out
}

// equal reports whether h and o have the same name and GPUs in the same order.
func (h Host) equal(o Host) bool { return h.Name == o.Name && slices.Equal(h.GPUs, o.GPUs) }

// grouped is a validated allocation: host names in order of first
// appearance and each host's GPUs in allocation order.
type grouped struct {
	order []string
	gpus  map[string][]int
}

// group validates alloc and groups its slots by host.
func group(alloc []Slot) (grouped, error) {
	if len(alloc) == 0 {
		return grouped{}, ErrEmptyAllocation
	}
	g := grouped{gpus: make(map[string][]int)}
	seen := make(map[Slot]bool, len(alloc))
	for _, s := range alloc {
		if err := checkHost(s.Host); err != nil {
			return grouped{}, err
		}
		if s.GPU < 0 {
			return grouped{}, fmt.Errorf("slot %s: %w: negative", s, ErrBadGPU)
		}
		if seen[s] {
			return grouped{}, fmt.Errorf("slot %s given twice: %w", s, ErrDuplicateSlot)
		}
		seen[s] = true
		if _, ok := g.gpus[s.Host]; !ok {
			g.order = append(g.order, s.Host)
		}
		g.gpus[s.Host] = append(g.gpus[s.Host], s.GPU)
	}
	return g, nil
}

// checkHost returns an error naming host if it cannot go into a host:slots
// line or a comma-separated host list.
func checkHost(host string) error {
	if host == "" {
		return fmt.Errorf("%w: empty", ErrBadHost)
	}
	i := strings.IndexFunc(host, func(r rune) bool {
		return r == ':' || r == ',' || unicode.IsSpace(r) || unicode.IsControl(r)
	})
	if i >= 0 {
		return fmt.Errorf("host %q: %w: it contains %q", host, ErrBadHost, host[i:i+1])
	}
	return nil
}

// Validate reports whether m keeps the invariants that New and Next
// establish: a job id, a generation of at least 1, at least one host, valid
// and distinct host names, and on every host at least one GPU with valid,
// distinct indices.
func (m Membership) Validate() error {
	if m.Job == "" {
		return fmt.Errorf("%w: %w", ErrInvalid, ErrEmptyJob)
	}
	if m.Generation < 1 {
		return fmt.Errorf("job %q: %w: generation %d", m.Job, ErrInvalid, m.Generation)
	}
	if len(m.Hosts) == 0 {
		return fmt.Errorf("job %q: %w: %w", m.Job, ErrInvalid, ErrEmptyAllocation)
	}
	names := make(map[string]bool, len(m.Hosts))
	for _, h := range m.Hosts {
		if err := checkHost(h.Name); err != nil {
			return fmt.Errorf("job %q: %w: %w", m.Job, ErrInvalid, err)
		}
		if names[h.Name] {
			return fmt.Errorf("job %q: %w: host %q listed twice: %w", m.Job, ErrInvalid, h.Name, ErrDuplicateSlot)
		}
		names[h.Name] = true
		if len(h.GPUs) == 0 {
			return fmt.Errorf("job %q: %w: host %q has no GPU: %w", m.Job, ErrInvalid, h.Name, ErrEmptyAllocation)
		}
		for r, gpu := range h.GPUs {
			s := Slot{Host: h.Name, GPU: gpu}
			if gpu < 0 {
				return fmt.Errorf("job %q: %w: slot %s: %w", m.Job, ErrInvalid, s, ErrBadGPU)
			}
			if slices.Contains(h.GPUs[:r], gpu) {
				return fmt.Errorf("job %q: %w: slot %s listed twice: %w", m.Job, ErrInvalid, s, ErrDuplicateSlot)
			}
		}
	}
	return nil
}

// WorldSize returns the number of GPUs (processes) in m.
func (m Membership) WorldSize() int {
	n := 0
	for _, h := range m.Hosts {
		n += len(h.GPUs)
	}
	return n
}

// Slots returns m's GPUs in global-rank order: Slots()[r] runs rank r.
func (m Membership) Slots() []Slot {
	out := make([]Slot, 0, m.WorldSize())
	for _, h := range m.Hosts {
		for _, gpu := range h.GPUs {
			out = append(out, Slot{Host: h.Name, GPU: gpu})
		}
	}
	return out
}

// HostList returns Horovod's host list: one "host:slots" line per host, in
// node-rank order, each ending in a newline ("h1:4\nh2:2\n"). It is what a
// horovodrun --host-discovery-script prints.
func (m Membership) HostList() string {
	var b strings.Builder
	for _, h := range m.Hosts {
		b.WriteString(h.Name)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(len(h.GPUs)))
		b.WriteByte('\n')
	}
	return b.String()
}

// NodeRank returns host's node rank (its index in m.Hosts) and the global
// rank of its local rank 0.
func (m Membership) NodeRank(host string) (node, firstRank int, err error) {
	for i, h := range m.Hosts {
		if h.Name == host {
			return i, firstRank, nil
		}
		firstRank += len(h.GPUs)
	}
	return 0, 0, fmt.Errorf("job %q generation %d: host %q: %w", m.Job, m.Generation, host, ErrUnknownHost)
}
