package power

import (
	"fmt"
	"math"
)

// GPUPower is the power draw of one GPU of a type.
type GPUPower struct {
	// IdleW is the draw of an idle GPU in watts, ≥ 0.
	IdleW float64
	// MaxW is the draw of a GPU at full utilisation in watts (its board
	// power or TDP), ≥ IdleW and > 0.
	MaxW float64
}

// Contention is a node's slowdown near full load: jobs on a node whose load
// (busy GPUs ÷ node GPUs) exceeds Knee run slower, by a factor that falls
// linearly from 1 at load Knee to 1 − Slowdown at load 1 (shared PCIe
// switches, host CPUs feeding the GPUs, the NIC, heat).
type Contention struct {
	// Knee is the load above which jobs slow down, in [0, 1]; 1 turns the
	// slowdown off.
	Knee float64
	// Slowdown is the fraction of speed lost at full load, in [0, 1).
	Slowdown float64
}

// NodePower is the power model of one node apart from its GPUs.
type NodePower struct {
	// BaseW is the draw of the node without its GPUs in watts (CPUs,
	// memory, fans, NICs, power-supply losses), ≥ 0, taken as constant.
	BaseW float64
	// Contention is the node's slowdown near full load.
	Contention Contention
	// Sleeps says that the node is power-managed: while none of its GPUs
	// is busy it is suspended and draws SleepW instead of BaseW plus its
	// idle GPUs. False (the default): the node stays on.
	Sleeps bool
	// SleepW is the draw of a suspended node in watts, ≥ 0; used only
	// when Sleeps is set.
	SleepW float64
	// SleepAfterS is how long in seconds a power-managed node stays on
	// while none of its GPUs is busy before it suspends itself, ≥ 0
	// (Slurm's SuspendTime). Meanwhile it draws AwakeIdleWatts.
	SleepAfterS float64
	// WakeS is how long in seconds a suspended node takes to wake up, ≥ 0:
	// jobs placed on it make no progress until it is up.
	WakeS float64
}

// Workload is how the jobs of one algorithm type (a model family) use their
// GPUs; it makes the energy curves, and so the calibrated load thresholds,
// differ between types.
type Workload struct {
	// Util is the utilisation of a busy GPU, in (0, 1]: it draws
	// IdleW + (MaxW − IdleW)·Util.
	Util float64
	// Sensitivity is how strongly the family feels a node's contention,
	// ≥ 0: its speed is the node's contention factor raised to this power
	// (0: unaffected, 1: as the node says, 2: twice as strongly, e.g. a
	// family that loads much data through the host).
	Sensitivity float64
}

// Validate reports whether g is a usable power description.
func (g GPUPower) Validate() error {
	switch {
	case !finite(g.IdleW) || g.IdleW < 0:
		return fmt.Errorf("idle power %v W: want a finite number ≥ 0", g.IdleW)
	case !finite(g.MaxW) || g.MaxW <= 0:
		return fmt.Errorf("maximum power %v W: want a finite number > 0", g.MaxW)
	case g.MaxW < g.IdleW:
		return fmt.Errorf("maximum power %v W is below the idle power %v W", g.MaxW, g.IdleW)
	}
	return nil
}

// Validate reports whether n is a usable node description.
func (n NodePower) Validate() error {
	switch c := n.Contention; {
	case !finite(n.BaseW) || n.BaseW < 0:
		return fmt.Errorf("base power %v W: want a finite number ≥ 0", n.BaseW)
	case !(c.Knee >= 0 && c.Knee <= 1):
		return fmt.Errorf("contention knee %v: want a load in [0, 1]", c.Knee)
	case !(c.Slowdown >= 0 && c.Slowdown < 1):
		return fmt.Errorf("contention slowdown %v: want a fraction in [0, 1)", c.Slowdown)
	case n.Sleeps && (!finite(n.SleepW) || n.SleepW < 0):
		return fmt.Errorf("sleep power %v W: want a finite number ≥ 0", n.SleepW)
	case n.Sleeps && (!finite(n.SleepAfterS) || n.SleepAfterS < 0):
		return fmt.Errorf("sleep after %v s: want a finite number ≥ 0", n.SleepAfterS)
	case n.Sleeps && (!finite(n.WakeS) || n.WakeS < 0):
		return fmt.Errorf("wake-up time %v s: want a finite number ≥ 0", n.WakeS)
	}
	return nil
}

// Validate reports whether w is a usable workload description.
func (w Workload) Validate() error {
	switch {
	case !(w.Util > 0 && w.Util <= 1):
		return fmt.Errorf("utilisation %v: want a fraction in (0, 1]", w.Util)
	case !finite(w.Sensitivity) || w.Sensitivity < 0:
		return fmt.Errorf("contention sensitivity %v: want a finite number ≥ 0", w.Sensitivity)
	}
	return nil
}

// NodeWatts returns the draw in watts of a node with total GPUs of which
// busy run jobs at utilisation util: its base power, IdleW for every idle
// GPU and IdleW + (MaxW − IdleW)·util for every busy one; a node with no
// busy GPU draws IdleWatts (SleepW when it sleeps). busy is clamped to
// [0, total] and util to [0, 1].
func NodeWatts(node NodePower, gpu GPUPower, busy, total int, util float64) float64 {
	total = max(total, 0)
	busy = min(max(busy, 0), total)
	return MixedWatts(node, gpu, busy, total, float64(busy)*min(max(util, 0), 1))
}

// MixedWatts is NodeWatts for busy GPUs that run jobs of different
// utilisations: utilSum is the sum of the busy GPUs' utilisations (each in
// [0, 1]), so the node draws BaseW + total·IdleW + (MaxW − IdleW)·utilSum,
// or IdleWatts when busy is 0. utilSum is clamped to [0, busy].
func MixedWatts(node NodePower, gpu GPUPower, busy, total int, utilSum float64) float64 {
	if busy <= 0 {
		return node.IdleWatts(gpu, total)
	}
	utilSum = min(max(utilSum, 0), float64(busy))
	return node.BaseW + float64(max(total, 0))*gpu.IdleW + (gpu.MaxW-gpu.IdleW)*utilSum
}

// IdleWatts returns the draw of a node of total GPUs none of which is busy:
// SleepW when the node sleeps (once it has suspended itself), else
// AwakeIdleWatts.
func (n NodePower) IdleWatts(gpu GPUPower, total int) float64 {
	if n.Sleeps {
		return n.SleepW
	}
	return n.AwakeIdleWatts(gpu, total)
}

// AwakeIdleWatts returns the draw of a node of total GPUs that is on with
// none of its GPUs busy: BaseW + total·IdleW. A power-managed node draws it
// for SleepAfterS after its last job leaves.
func (n NodePower) AwakeIdleWatts(gpu GPUPower, total int) float64 {
	return n.BaseW + float64(max(total, 0))*gpu.IdleW
}

// ContentionOff reports whether the node never slows its jobs down: its
// knee is at full load or its slowdown is 0.
func (n NodePower) ContentionOff() bool {
	return n.Contention.Knee >= 1 || n.Contention.Slowdown == 0
}

// BusyWatts returns the draw of one GPU running a job at utilisation util
// (clamped to [0, 1]): IdleW + (MaxW − IdleW)·util.
func (g GPUPower) BusyWatts(util float64) float64 {
	return g.IdleW + (g.MaxW-g.IdleW)*min(max(util, 0), 1)
}

// watts is NodeWatts for a possibly fractional number of busy GPUs (a ramp
// raises the load continuously) of a node that is on: a ramp measures a
// running node, so its idle reading is BaseW + total·IdleW even for a node
// that sleeps when idle.
func watts(node NodePower, gpu GPUPower, busy, total, util float64) float64 {
	util = min(max(util, 0), 1)
	return node.BaseW + total*gpu.IdleW + busy*(gpu.MaxW-gpu.IdleW)*util
}

// Speed returns the contention factor of a node at load (busy GPUs ÷ node
// GPUs, clamped to [0, 1]): 1 up to the knee, then falling linearly to
// 1 − Slowdown at load 1. A job's speed on the node is its speed from the
// throughput matrix times this factor.
func Speed(node NodePower, load float64) float64 {
	c := node.Contention
	load = min(max(load, 0), 1)
	if load <= c.Knee || c.Knee >= 1 {
		return 1
	}
	return 1 - c.Slowdown*(load-c.Knee)/(1-c.Knee)
}

// Speed returns the contention factor that jobs of w feel on node at load:
// Speed(node, load) raised to w.Sensitivity.
func (w Workload) Speed(node NodePower, load float64) float64 {
	return math.Pow(Speed(node, load), w.Sensitivity)
}

// EnergyPerWork returns the energy in joules that a node of total GPUs
// spends per unit of work at load (busy GPUs ÷ total, in (0, 1]) when its
// busy GPUs run jobs of w. A unit of work is one GPU-second at full speed,
// so the result is the node's draw over load·total·speed. It is +Inf at
// load 0, where the node does no work, and NaN for total < 1.
func EnergyPerWork(node NodePower, gpu GPUPower, w Workload, total int, load float64) float64 {
	if total < 1 {
		return math.NaN()
	}
	load = min(max(load, 0), 1)
	busy := load * float64(total)
	work := busy * w.Speed(node, load)
	if work <= 0 {
		return math.Inf(1)
	}
	return watts(node, gpu, busy, float64(total), w.Util) / work
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
