package scheduler

import (
	"slices"
	"strconv"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

// removal is a replica taken out of a node's work that may still run.
type removal struct {
	job string
	// at is the node's work version without the replica: a report of an
	// agent that has applied it and does not list the replica means the
	// replica is gone.
	at int64
}

// node is a machine with an agent.
type node struct {
	name, addr string
	gpus       []api.GPU // sorted by index, one type
	typ        string
	// capacity is what the node offers besides its GPUs (nil: nothing).
	capacity model.Resources
	ready    bool
	// pending: loaded from the store by a restarted server and not yet
	// registered again.
	pending  bool
	lastSeen time.Time
	// unmetered: the node's latest status report carried no power
	// reading, so the power model accounts it from its first second
	// (accountModelled) until readings come.
	unmetered bool

	version int64
	work    map[string]api.Replica
	removed map[string]removal
	// applied is the newest work version the agent is known to have
	// applied (from its long-polls and status reports).
	applied int64
	acked   []string
	changed chan struct{}
}

func newNode(name, addr string, gpus []api.GPU, capacity model.Resources) *node {
	return &node{name: name, addr: addr, gpus: gpus, typ: gpus[0].Type, capacity: capacity,
		work: map[string]api.Replica{}, removed: map[string]removal{}, changed: make(chan struct{})}
}

// pos returns the model index (position) of device index dev, or -1.
func (n *node) pos(dev int) int {
	for i, g := range n.gpus {
		if g.Index == dev {
			return i
		}
	}
	return -1
}

// masterAddr is the address other nodes reach n by.
func (n *node) masterAddr() string {
	if n.addr != "" {
		return n.addr
	}
	return n.name
}

// snapshot returns the node's work as the agent gets it.
func (n *node) snapshot() api.Work {
	w := api.Work{Version: n.version, Replicas: make([]api.Replica, 0, len(n.work)), Acked: n.acked}
	for _, id := range slicesSortedKeys(n.work) {
		w.Replicas = append(w.Replicas, n.work[id])
	}
	return w
}

// view returns the node as GET /v1/nodes shows it; used is its held GPUs.
func (n *node) view(used int) api.Node {
	st := api.NodeDown
	if n.ready {
		st = api.NodeReady
	}
	v := api.Node{Name: n.name, Addr: n.addr, State: st, GPUs: n.gpus, GPUsUsed: used, LastHeartbeat: n.lastSeen.UTC(),
		Capacity: api.FormatResources(n.capacity)}
	ids := append(slicesSortedKeys(n.work), slicesSortedKeys(n.removed)...)
	for _, id := range ids {
		if job, _, rank, ok := api.ParseReplicaID(id); ok {
			v.Replicas = append(v.Replicas, job+"/"+strconv.Itoa(rank))
		}
	}
	return v
}

// record returns the node's durable form.
func (n *node) record() nodeRecord {
	return nodeRecord{Name: n.name, Addr: n.addr, GPUs: n.gpus, Down: !n.ready && !n.pending,
		Capacity: api.FormatResources(n.capacity)}
}

// slicesSortedKeys returns m's keys, sorted.
func slicesSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
