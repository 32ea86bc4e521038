package trace

import (
	"io"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// AlibabaNode is one line of an Alibaba 2023 node list
// (openb_node_list_gpu_node.csv, openb_node_list_all_node.csv).
type AlibabaNode struct {
	// Name is the node's serial name (column sn).
	Name string
	// CPUMilli and MemMiB are the node's CPU in millicores and memory in
	// MiB.
	CPUMilli, MemMiB int64
	// GPUs is the node's GPU count, 0 for a CPU-only node.
	GPUs int
	// Model is the GPU model as the trace writes it ("P100", "V100M16",
	// "G2"); empty for a CPU-only node.
	Model string
}

// Capacity returns what the node offers besides its GPUs: its CPU and
// memory (zero amounts left out).
func (n AlibabaNode) Capacity() model.Resources {
	return alibabaRequests(n.CPUMilli, n.MemMiB)
}

// The columns of an Alibaba node list, in order.
const (
	aliNodeName = iota
	aliNodeCPU
	aliNodeMem
	aliNodeGPUs
	aliNodeModel
	aliNodeColumns
)

// ReadAlibabaNodes reads an Alibaba 2023 node list (header
// "sn,cpu_milli,memory_mib,gpu,model"), nodes in file order. Names must be
// unique and fit a GPU id (no '/'); a node with GPUs must name its model
// and have at most model.MaxGPUsPerNode. name is used only in error
// messages; every error is an *Error.
func ReadAlibabaNodes(r io.Reader, name string) ([]AlibabaNode, error) {
	var nodes []AlibabaNode
	seen := map[string]int{}
	err := readRows(r, name, alibabaNodesHeader, ',', aliNodeColumns, func(l *lines, cols [][]byte) error {
		n, err := alibabaNode(l, cols)
		if err != nil {
			return err
		}
		if first, dup := seen[n.Name]; dup {
			return l.fail("duplicate sn %s (first on line %d)", quote([]byte(n.Name)), first)
		}
		seen[n.Name] = l.n
		nodes = append(nodes, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, &Error{File: name, Msg: "no nodes in the node list"}
	}
	return nodes, nil
}

// alibabaNode converts the columns of one node line.
func alibabaNode(l *lines, cols [][]byte) (AlibabaNode, error) {
	var n AlibabaNode
	var err error
	if n.Name, err = l.nonEmpty("sn", cols[aliNodeName]); err != nil {
		return n, err
	}
	if strings.ContainsAny(n.Name, "/ \t") {
		return n, l.fail("sn %s: a node name must not hold '/' or spaces", quote([]byte(n.Name)))
	}
	if n.CPUMilli, err = l.integer("cpu_milli", cols[aliNodeCPU], 0, maxCPUMilli); err != nil {
		return n, err
	}
	if n.MemMiB, err = l.integer("memory_mib", cols[aliNodeMem], 0, maxMemMiB); err != nil {
		return n, err
	}
	gpus, err := l.integer("gpu", cols[aliNodeGPUs], 0, model.MaxGPUsPerNode)
	if err != nil {
		return n, err
	}
	n.GPUs = int(gpus)
	n.Model = strings.TrimSpace(string(cols[aliNodeModel]))
	if n.GPUs > 0 && n.Model == "" {
		return n, l.fail("model is empty for a node with %d GPUs", n.GPUs)
	}
	return n, nil
}

// IsAlibabaNodes reports whether head, the first bytes of a file, starts
// with the header of an Alibaba node list.
func IsAlibabaNodes(head []byte) bool {
	return headerIs(firstLine(head), alibabaNodesHeader)
}
