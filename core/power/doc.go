// Package power models the power draw of GPU nodes and the slowdown of jobs
// on a node near full load (issue 5, seed 002). docs/ENERGY.md describes the
// model and gives the source of every default.
//
// # Model
//
// A node of total GPUs of one type, busy of them running jobs, draws
//
//	NodeWatts = BaseW + (total − busy)·IdleW + busy·(IdleW + (MaxW − IdleW)·util)
//
// where BaseW is the node's draw without its GPUs (NodePower), IdleW and MaxW
// that of one GPU idle and at full utilisation (GPUPower), and util the
// utilisation of a busy GPU, which depends on the job's algorithm type (its
// model family: Workload.Util). Jobs of different families on one node add
// their own (MaxW − IdleW)·util per busy GPU (MixedWatts). A node with no
// busy GPU draws BaseW + total·IdleW (AwakeIdleWatts); a power-managed node
// (NodePower.Sleeps, the default) suspends itself once it has been idle for
// SleepAfterS and then draws SleepW (IdleWatts), and takes WakeS to wake up
// when work is placed on it.
//
// The node's load is busy ÷ total. Above the contention knee jobs on the node
// run slower, because they share PCIe switches, host CPUs, the NIC and the
// cooling: Speed falls linearly from 1 at load Knee to 1 − Slowdown at load
// 1. A family feels it according to its Sensitivity (its factor is Speed
// raised to that power).
//
// A unit of work is one GPU-second at full speed, so a node at load L does
// L·total·speed units per second, and EnergyPerWork = NodeWatts ÷ that. The
// curve is the one of seed 002 (claim 5): high at low load, where the base
// and idle power are spread over little work; falling ever more slowly up to
// the knee; rising above it, where the node draws as much power but does
// less work.
//
// # Calibration ramps
//
// Ramp synthesizes the samples of seed 002's calibration ramp from the model
// (load, power, throughput, from load 0 to 1), for one node type and one
// family, so that the simulator can derive each node type's load thresholds
// with calibrate.Fit, as a real cluster would from its BMC readings. Sample
// has the fields of calibrate.Sample; the shell converts (calibrate may do
// I/O, power is part of the pure core and imports neither calibrate nor
// anything that does I/O). Fit the ramps with calibrate.Options{Tolerance:
// FitTolerance}: with realistic base and idle power the curve never becomes
// as flat as calibrate's default tolerance asks (see FitTolerance).
//
// The package is pure: it reads no file, clock or global.
package power
