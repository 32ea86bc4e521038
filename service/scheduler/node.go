package scheduler

import "github.com/gpusched/gpusched/service/nodes"

// The node table (package nodes): s.tab.Nodes, changed under s.mu.
type (
	node    = nodes.Node
	removal = nodes.Removal
)
