package scheduler

import (
	"slices"

	"github.com/gpusched/gpusched/service/nodes"
)

// The node table (package nodes): s.nodes, changed under s.mu.
type (
	node    = nodes.Node
	removal = nodes.Removal
)

// slicesSortedKeys returns m's keys, sorted.
func slicesSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
