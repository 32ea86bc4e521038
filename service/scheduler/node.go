package scheduler

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpusched/gpusched/core/membership"
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

// checkRegistration validates a registration: checkRegister, and its
// capacity, which comes back parsed.
func checkRegistration(r *api.Register) ([]api.GPU, model.Resources, error) {
	gpus, ferr := checkRegister(r)
	if ferr != nil {
		return nil, nil, ferr
	}
	capa, err := api.ParseResources("capacity", r.Capacity)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := capa[model.ResourcePods]; ok {
		return nil, nil, &api.FieldError{Field: "capacity.pods", Message: "the service counts no pods (one process group per job and node)"}
	}
	return gpus, capa, nil
}

// checkRegister validates a registration; the GPUs come back sorted by index
// with lower-case types.
func checkRegister(r *api.Register) ([]api.GPU, *api.FieldError) {
	if _, err := membership.New("check", []membership.Slot{{Host: r.Name, GPU: 0}}); err != nil || r.Name == "" {
		return nil, &api.FieldError{Field: "name", Message: fmt.Sprintf("%q is not a valid node name (no ':', ',', white space or control characters)", r.Name)}
	}
	if strings.ContainsAny(r.Addr, " \t\r\n\x00") {
		return nil, &api.FieldError{Field: "addr", Message: "must not contain white space or control characters"}
	}
	if len(r.GPUs) == 0 || len(r.GPUs) > model.MaxGPUsPerNode {
		return nil, &api.FieldError{Field: "gpus", Message: fmt.Sprintf("%d GPUs: want 1..%d", len(r.GPUs), model.MaxGPUsPerNode)}
	}
	gpus := slices.Clone(r.GPUs)
	slices.SortFunc(gpus, func(a, b api.GPU) int { return a.Index - b.Index })
	for i := range gpus {
		g := &gpus[i]
		g.Type = strings.ToLower(strings.TrimSpace(g.Type))
		switch {
		case g.Index < 0 || (i > 0 && g.Index == gpus[i-1].Index):
			return nil, &api.FieldError{Field: "gpus", Message: fmt.Sprintf("GPU index %d is negative or given twice", g.Index)}
		case g.Type == "":
			return nil, &api.FieldError{Field: "gpus", Message: fmt.Sprintf("GPU %d has no type", g.Index)}
		case g.Type != gpus[0].Type:
			return nil, &api.FieldError{Field: "gpus", Message: fmt.Sprintf("GPUs of types %q and %q: a node must hold GPUs of one type (run one agent per type)", gpus[0].Type, g.Type)}
		case g.MemMiB < 0:
			return nil, &api.FieldError{Field: "gpus", Message: fmt.Sprintf("GPU %d: negative memory", g.Index)}
		}
	}
	return gpus, nil
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
