package nodes

import (
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// The node table (name -> node) as the rooms read a job against it.

// GPUsOn returns the device indices a running job's live replicas hold
// on node name.
func GPUsOn(rec *ledger.Record, name string) []int {
	if rec.State != api.Running {
		return nil
	}
	var devs []int
	for _, rr := range rec.Replicas {
		if rr.Node == name && !rr.Done {
			devs = append(devs, rr.GPUs...)
		}
	}
	return devs
}

// JobGPUType returns the GPU type of a running job's live replicas on the
// node table m, "" when they are on several types (or none).
func JobGPUType(rec *ledger.Record, m map[string]*Node) string {
	typ := ""
	for _, rr := range rec.Replicas {
		if rr.Done {
			continue
		}
		n := m[rr.Node]
		if n == nil || (typ != "" && n.Type != typ) {
			return ""
		}
		typ = n.Type
	}
	return typ
}

// Ready returns the ready nodes of table m, in no order.
func Ready(m map[string]*Node) []*Node {
	var ready []*Node
	for _, n := range m {
		if n.Ready {
			ready = append(ready, n)
		}
	}
	return ready
}

// ReadyGPUType returns GPUType of typ over the ready nodes of table m.
func ReadyGPUType(typ string, m map[string]*Node) model.GPUType { return GPUType(typ, Ready(m)) }

// NoteRan adds the attempt that ends now to a job's ran record: its
// running time, GPUs and GPU type (for the energy report's replay), the
// type read from the node table m.
func NoteRan(rec *ledger.Record, m map[string]*Node, now time.Time) {
	if rec.StartedAt == nil || rec.State != api.Running {
		return
	}
	rec.Ran.Seconds += max(now.Sub(*rec.StartedAt).Seconds(), 0)
	rec.Ran.GPUs = len(rec.Alloc)
	for _, rr := range rec.Replicas {
		if n := m[rr.Node]; n != nil && rr.Member() {
			rec.Ran.Type = n.Type
			break
		}
	}
}

// ModelAlloc returns a running job's GPUs in cluster c (of the node
// table m, indexed by idx), leaving out those
// on nodes that are not in it, of lost replicas and of replicas that a
// resize took out and that are gone (those still being stopped hold
// theirs).
func ModelAlloc(rec *ledger.Record, m map[string]*Node, c *model.Cluster, idx map[string]int) []model.GPU {
	var out []model.GPU
	for _, rr := range rec.Replicas {
		ni, ok := idx[rr.Node]
		if !ok || rr.Lost || (rr.Left && rr.Done) {
			continue
		}
		n := m[rr.Node]
		for _, dev := range rr.GPUs {
			if p := n.Pos(dev); p >= 0 && p < c.Nodes[ni].GPUs {
				out = append(out, model.GPU{Node: int32(ni), Index: int32(p)})
			}
		}
	}
	return out
}
