package nodes

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// Removal is a replica taken out of a node's work that may still run.
type Removal struct {
	Job string
	// At is the node's work version without the replica: a report of an
	// agent that has applied it and does not list the replica means the
	// replica is gone.
	At int64
}

// Node is a machine with an agent.
type Node struct {
	Name, Addr string
	GPUs       []api.GPU // sorted by index, one type
	Type       string
	// Capacity is what the node offers besides its GPUs (nil: nothing).
	Capacity model.Resources
	Ready    bool
	// Pending: loaded from the store by a restarted server and not yet
	// registered again.
	Pending  bool
	LastSeen time.Time
	// Unmetered: the node's latest status report carried no power
	// reading, so the power model accounts it from its first second
	// (accountModelled) until readings come.
	Unmetered bool

	Version int64
	Work    map[string]api.Replica
	Removed map[string]Removal
	// Applied is the newest work version the agent is known to have
	// applied (from its long-polls and status reports).
	Applied int64
	Acked   []string
	// Changed is closed when the work changes (a new version).
	Changed chan struct{}
}

// New returns node name at addr with gpus (at least one, sorted by index,
// of one type) and capacity, not ready, with no work.
func New(name, addr string, gpus []api.GPU, capacity model.Resources) *Node {
	return &Node{Name: name, Addr: addr, GPUs: gpus, Type: gpus[0].Type, Capacity: capacity,
		Work: map[string]api.Replica{}, Removed: map[string]Removal{}, Changed: make(chan struct{})}
}

// Pos returns the model index (position) of device index dev, or -1.
func (n *Node) Pos(dev int) int {
	for i, g := range n.GPUs {
		if g.Index == dev {
			return i
		}
	}
	return -1
}

// MasterAddr is the address other nodes reach n by.
func (n *Node) MasterAddr() string {
	if n.Addr != "" {
		return n.Addr
	}
	return n.Name
}

// Snapshot returns the node's work as the agent gets it.
func (n *Node) Snapshot() api.Work {
	w := api.Work{Version: n.Version, Replicas: make([]api.Replica, 0, len(n.Work)), Acked: n.Acked}
	for _, id := range slices.Sorted(maps.Keys(n.Work)) {
		w.Replicas = append(w.Replicas, n.Work[id])
	}
	return w
}

// View returns the node as GET /v1/nodes shows it; used is its held GPUs.
func (n *Node) View(used int) api.Node {
	st := api.NodeDown
	if n.Ready {
		st = api.NodeReady
	}
	v := api.Node{Name: n.Name, Addr: n.Addr, State: st, GPUs: n.GPUs, GPUsUsed: used, LastHeartbeat: n.LastSeen.UTC(),
		Capacity: api.FormatResources(n.Capacity)}
	ids := append(slices.Sorted(maps.Keys(n.Work)), slices.Sorted(maps.Keys(n.Removed))...)
	for _, id := range ids {
		if job, _, rank, ok := api.ParseReplicaID(id); ok {
			v.Replicas = append(v.Replicas, job+"/"+strconv.Itoa(rank))
		}
	}
	return v
}

// Record returns the node's durable form.
func (n *Node) Record() ledger.Node {
	return ledger.Node{Name: n.Name, Addr: n.Addr, GPUs: n.GPUs, Down: !n.Ready && !n.Pending,
		Capacity: api.FormatResources(n.Capacity)}
}

// Bump gives n's work version (a new one, from the table's counter) and
// wakes its long-polls.
func (n *Node) Bump(version int64) {
	n.Version = version
	close(n.Changed)
	n.Changed = make(chan struct{})
}

// NoteApplied records that the agent has applied work version v (from a
// long-poll or a status report): a version of this node's, newer than
// what it was known to have applied.
func (n *Node) NoteApplied(v int64) {
	if v > n.Applied && v <= n.Version {
		n.Applied = v
	}
}

// SetAcked sets the exited replicas the node's work acknowledges and
// reports whether it acknowledges any new one (the work then needs a new
// version, so that a waiting long-poll delivers them).
func (n *Node) SetAcked(acked []string) bool {
	grew := false
	for _, id := range acked {
		if !slices.Contains(n.Acked, id) {
			grew = true
		}
	}
	n.Acked = acked
	return grew
}

// Wait waits until changed (a Changed of the node's) is closed, wait has
// passed, ctx has ended or stopped is closed: a long-poll's wait.
func Wait(ctx context.Context, changed, stopped <-chan struct{}, wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	case <-ctx.Done():
	case <-stopped:
	}
}
