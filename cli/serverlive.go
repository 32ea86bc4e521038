package cli

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/service/energy"
)

// liveOptions are the flags of seed 002 on live machines shared by server
// and dev (docs/ENERGY.md, "Live").
type liveOptions struct {
	cluster          string
	suspendIdle      bool
	suspendAfter     time.Duration
	powerSampleEvery time.Duration
}

// addLiveFlags defines the live flags on cmd.
func addLiveFlags(cmd *cobra.Command, o *liveOptions) {
	f := cmd.Flags()
	f.StringVar(&o.cluster, "cluster", "", "cluster file (YAML, docs/CLUSTER.md): node classes and power models (default thresholds, modelled energy), storage endpoints to probe")
	f.BoolVar(&o.suspendIdle, "suspend-idle", false, "report nodes idle for --suspend-after as power-down candidates and run the config's energy.suspend_hook for each (nothing is powered down otherwise)")
	f.DurationVar(&o.suspendAfter, "suspend-after", energy.DefaultSuspendAfter, "with --suspend-idle: how long a node must stay idle")
	f.DurationVar(&o.powerSampleEvery, "power-sample-every", energy.DefaultPowerSampleEvery, "shortest time between two stored power samples of a node at the same load (a new load is always sampled)")
}

// liveConfig builds the scheduler's live settings from the flags, the
// --config file's energy block (flags given on the command line win) and
// the --cluster file.
func (o *liveOptions) liveConfig(sched *config.SchedFile, given func(string) bool) (energy.Config, time.Duration, error) {
	var lc energy.Config
	if o.powerSampleEvery <= 0 || o.suspendAfter <= 0 {
		return lc, 0, badInput("--power-sample-every and --suspend-after must be positive")
	}
	if o.cluster != "" {
		data, err := os.ReadFile(o.cluster)
		if err != nil {
			return lc, 0, badInput("--cluster: %w", err)
		}
		f, err := config.DecodeFile(o.cluster, data)
		if err != nil {
			return lc, 0, usageError{err}
		}
		if _, err := f.Cluster(o.cluster); err != nil {
			return lc, 0, usageError{err}
		}
		lc.Cluster, lc.ClusterName = f, o.cluster
	}
	lc.SuspendIdle, lc.SuspendAfter = o.suspendIdle, o.suspendAfter
	if sched != nil {
		e := sched.Energy()
		if e.SuspendIdle != nil && !given("suspend-idle") {
			lc.SuspendIdle = *e.SuspendIdle
		}
		if e.SuspendAfter != nil && !given("suspend-after") {
			lc.SuspendAfter = *e.SuspendAfter
		}
		lc.SuspendHook = e.SuspendHook
		if e.CalibrateWindow != nil {
			lc.Calibration.Window = *e.CalibrateWindow
		}
		if e.CalibrateTolerance != nil {
			lc.Calibration.Tolerance = *e.CalibrateTolerance
		}
		if e.MinNewSamples != nil {
			lc.MinNewSamples = *e.MinNewSamples
		}
		if e.RTTWindow != nil {
			lc.RTTWindow = *e.RTTWindow
		}
	}
	return lc, o.powerSampleEvery, nil
}
