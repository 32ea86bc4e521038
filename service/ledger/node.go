package ledger

import (
	"encoding/json"
	"fmt"

	"github.com/gpusched/gpusched/service/api"
)

// Node is a node as the store keeps it under "nodes/<name>".
type Node struct {
	Name string    `json:"name"`
	Addr string    `json:"addr"`
	GPUs []api.GPU `json:"gpus"`
	// Down: the node was marked down; a restarted server does not wait for
	// it.
	Down bool `json:"down,omitempty"`
	// Capacity is what the node offers besides its GPUs
	// (api.Register.Capacity); absent in records of older servers and
	// agents: none.
	Capacity map[string]string `json:"capacity,omitempty"`
}

// MarshalNode encodes r as the store keeps it.
func MarshalNode(r Node) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode node %s: %w", r.Name, err)
	}
	return data, nil
}
