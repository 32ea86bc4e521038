package audit

import (
	"encoding/json"
	"fmt"
	"sort"
)

// nodeInfo is one node of a cluster event's nodes: its capacity of the
// resources besides GPUs.
type nodeInfo struct {
	Node     string           `json:"node"`
	Capacity map[string]int64 `json:"capacity"`
}

// book is the audit's own account of the resources besides GPUs: what each
// node offers (the cluster event's nodes) and what the replicas of the
// running jobs there ask (their submit's requests). A node holding k GPUs
// of a job holds ⌈k/replica_gpus⌉ of its replicas.
type book struct {
	gpuNode  map[string]string           // GPU id → node
	capacity map[string]map[string]int64 // node → resource → amount
	used     map[string]map[string]int64 // node → resource → amount asked
}

// nodes records the cluster event's nodes (absent when the cluster models
// nothing besides GPUs) and the node of every GPU.
func (b *book) nodes(e *rawEvent, gpus []gpuInfo) error {
	b.gpuNode = make(map[string]string, len(gpus))
	for _, g := range gpus {
		b.gpuNode[g.ID] = g.Node
	}
	if e.Nodes == nil {
		return nil
	}
	var nodes []nodeInfo
	if err := json.Unmarshal(e.Nodes, &nodes); err != nil {
		return fmt.Errorf("cluster event: nodes must be a list of nodes with a capacity: %w", err)
	}
	b.capacity = make(map[string]map[string]int64, len(nodes))
	b.used = make(map[string]map[string]int64, len(nodes))
	for i, n := range nodes {
		switch {
		case n.Node == "":
			return fmt.Errorf("cluster event: node #%d has no name", i+1)
		case b.capacity[n.Node] != nil:
			return fmt.Errorf("cluster event: node %s listed twice", n.Node)
		}
		for _, r := range sortedNames(n.Capacity) {
			if n.Capacity[r] < 0 {
				return fmt.Errorf("cluster event: node %s has a negative capacity of %s (%d)", n.Node, r, n.Capacity[r])
			}
		}
		b.capacity[n.Node] = n.Capacity
		b.used[n.Node] = map[string]int64{}
	}
	return nil
}

// request checks a submit's replica_gpus and requests and stores them in j.
func (b *book) request(e *rawEvent, j *job) error {
	j.replicaGPUs = 1
	if e.ReplicaGPUs != nil {
		if *e.ReplicaGPUs < 1 {
			return fmt.Errorf("submit of %s: replica_gpus must be at least 1, got %d", j.id, *e.ReplicaGPUs)
		}
		j.replicaGPUs = *e.ReplicaGPUs
	}
	for _, r := range sortedNames(e.Requests) {
		switch q := e.Requests[r]; {
		case q < 0:
			return fmt.Errorf("submit of %s asks a negative amount of %s (%d)", j.id, r, q)
		case q > 0 && b.capacity == nil:
			return fmt.Errorf("submit of %s asks for %s, but the cluster event lists no node capacities", j.id, r)
		}
	}
	j.requests, j.requestNames = e.Requests, sortedNames(e.Requests)
	return nil
}

// charge adds (sign 1) or takes back (-1) what j's replicas on alloc ask of
// their nodes; adding, it fails when a node would hold more of a resource
// than it offers, naming the node, the resource and the amounts.
func (b *book) charge(j *job, alloc []string, sign int64) error {
	if len(j.requests) == 0 || b.used == nil {
		return nil
	}
	perNode := map[string]int{}
	var order []string
	for _, g := range alloc {
		n := b.gpuNode[g]
		if perNode[n] == 0 {
			order = append(order, n)
		}
		perNode[n]++
	}
	for _, n := range order {
		reps := int64((perNode[n] + j.replicaGPUs - 1) / j.replicaGPUs)
		for _, r := range j.requestNames {
			b.used[n][r] += sign * reps * j.requests[r]
			if sign > 0 && b.used[n][r] > b.capacity[n][r] {
				return fmt.Errorf("node %s overbooked on %s after %s got %d of its GPUs: its jobs ask %d, it offers %d",
					n, r, j.id, perNode[n], b.used[n][r], b.capacity[n][r])
			}
		}
	}
	return nil
}

// sortedNames returns m's keys in order, so that checks and messages do not
// depend on map order.
func sortedNames(m map[string]int64) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
