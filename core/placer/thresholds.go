package placer

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// DefaultFamily is the algorithm type of a job without a model.
const DefaultFamily = "default"

// Family returns the algorithm type (model family) of a job's model name:
// the part of a Gavel job type before " (batch size", e.g. "ResNet-50" for
// "ResNet-50 (batch size 64)", the whole name otherwise, and DefaultFamily
// for an empty name.
func Family(model string) string {
	f, _, _ := strings.Cut(model, " (batch size")
	if f = strings.TrimSpace(f); f == "" {
		return DefaultFamily
	}
	return f
}

// LoadThresholds are a node's two thresholds on its load (busy GPUs ÷ node
// GPUs) for one algorithm type (seed 002, claim 3): load ≤ Th1 is load state
// 1, Th1 < load ≤ Th2 state 2, load > Th2 state 3.
type LoadThresholds struct {
	Th1, Th2 float64
}

// limits returns the most busy GPUs of a node of total GPUs that are still in
// state 1 and in state 2: ⌊Th1·total⌋ and ⌊Th2·total⌋ (a whole number of
// busy GPUs b is in state 1 exactly when b ≤ Th1·total). A tiny tolerance
// keeps a threshold that lies on a GPU boundary, such as 0.75 of 8 GPUs,
// from falling one GPU short through rounding.
func (t LoadThresholds) limits(total int) (lim1, lim2 int) {
	const eps = 1e-9
	return int(t.Th1*float64(total) + eps), int(t.Th2*float64(total) + eps)
}

// State returns the load state, 1, 2 or 3, of a node of total GPUs with busy
// of them busy.
func (t LoadThresholds) State(busy, total int) int {
	lim1, lim2 := t.limits(total)
	switch {
	case busy <= lim1:
		return 1
	case busy <= lim2:
		return 2
	}
	return 3
}

// EnergyTable is seed 002's type→thresholds table of every node (claim 4):
// the load thresholds of node i for jobs of algorithm type f are
// Th[Class[i]][Families[f]]. Nodes of one shape (GPU type, GPU count, power
// model) share a class. The shell derives it by calibrating the power model
// (docs/ENERGY.md); the core only reads it.
type EnergyTable struct {
	// Families maps an algorithm type (Family of a job's model) to its
	// column of Th; a type not in it uses column 0, which is the
	// thresholds of DefaultFamily.
	Families map[string]int
	// Class gives every node's row of Th, in the order of the cluster's
	// nodes.
	Class []int
	// Th holds one row per class and one column per family.
	Th [][]LoadThresholds
	// Sleeps says, per node in the cluster's order, that the node is
	// power-managed: while none of its GPUs is busy it suspends itself,
	// and work placed on it must pay its whole static draw again (and
	// wait for it to wake up). nil: every node stays on.
	Sleeps []bool
	// Cost, when set, holds per class (row) and family (column) the
	// class's energy per unit of work at its stable level, ≥ 0 (the
	// calibration's Level): within a group of the orchestration sequence,
	// nodes with equal latency are ordered by it, lowest first, so that
	// the node that does the most work per joule fills first. nil: ties
	// go to the node index (the simulator's table; the service learns the
	// levels).
	Cost [][]float64
}

// Validate checks that t describes cluster c: one class per node, every
// row with a column for every family, and 0 ≤ Th1 ≤ Th2 ≤ 1 throughout.
func (t *EnergyTable) Validate(c *model.Cluster) error {
	if len(t.Class) != len(c.Nodes) {
		return fmt.Errorf("energy table: %d node classes for %d nodes", len(t.Class), len(c.Nodes))
	}
	if t.Sleeps != nil && len(t.Sleeps) != len(c.Nodes) {
		return fmt.Errorf("energy table: sleep flags for %d nodes, the cluster has %d", len(t.Sleeps), len(c.Nodes))
	}
	cols := 1
	for f, col := range t.Families {
		if col < 0 {
			return fmt.Errorf("energy table: family %q has column %d", f, col)
		}
		cols = max(cols, col+1)
	}
	for i, k := range t.Class {
		if k < 0 || k >= len(t.Th) {
			return fmt.Errorf("energy table: node %s has class %d of %d", c.Nodes[i].Name, k, len(t.Th))
		}
	}
	if err := t.validateCost(cols); err != nil {
		return err
	}
	for k, row := range t.Th {
		if len(row) < cols {
			return fmt.Errorf("energy table: class %d has %d columns, want %d", k, len(row), cols)
		}
		for f, th := range row {
			if !(th.Th1 >= 0 && th.Th1 <= th.Th2 && th.Th2 <= 1) {
				return fmt.Errorf("energy table: class %d, column %d: thresholds %v, %v: want 0 ≤ th1 ≤ th2 ≤ 1", k, f, th.Th1, th.Th2)
			}
		}
	}
	return nil
}

// validateCost checks Cost: nil, or a row per class with a column per
// family, each a finite number ≥ 0.
func (t *EnergyTable) validateCost(cols int) error {
	if t.Cost == nil {
		return nil
	}
	if len(t.Cost) != len(t.Th) {
		return fmt.Errorf("energy table: costs for %d classes, thresholds for %d", len(t.Cost), len(t.Th))
	}
	for k, row := range t.Cost {
		if len(row) < cols {
			return fmt.Errorf("energy table: class %d has %d costs, want %d", k, len(row), cols)
		}
		for f, c := range row {
			if !(c >= 0) || math.IsInf(c, 0) {
				return fmt.Errorf("energy table: class %d, column %d: cost %v: want a finite number ≥ 0", k, f, c)
			}
		}
	}
	return nil
}

// cost returns node i's energy per unit of work for family column f, 0
// without costs.
func (t *EnergyTable) cost(i, f int) float64 {
	if t.Cost == nil {
		return 0
	}
	return t.Cost[t.Class[i]][f]
}

// sleeps reports whether node i is power-managed.
func (t *EnergyTable) sleeps(i int) bool { return t.Sleeps != nil && t.Sleeps[i] }

// thresholds returns node i's thresholds for family column f.
func (t *EnergyTable) thresholds(i, f int) LoadThresholds { return t.Th[t.Class[i]][f] }

// column returns the column of job j's algorithm type.
func (t *EnergyTable) column(j *model.Job) int { return t.Families[Family(j.Spec.Model)] }

var errNoTable = errors.New("energy placer: no load-threshold table")

func errNetworkSize(net, nodes int) error {
	return fmt.Errorf("energy placer: the network describes %d nodes, the cluster has %d", net, nodes)
}
