package energy

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/calibrate"
	"github.com/gpusched/gpusched/core/power"
)

// Defaults of Config's zero fields.
const (
	// DefaultSuspendAfter is how long a node stays idle before it is a
	// power-down candidate: power.DefaultSleepAfterS, the simulator's.
	DefaultSuspendAfter = time.Duration(power.DefaultSleepAfterS) * time.Second
	// DefaultMinNewSamples is how many new samples a node class collects
	// for an algorithm type before it is calibrated again.
	DefaultMinNewSamples = 20
	// DefaultRTTWindow is the number of latest probes whose median is a
	// node's distance to a data endpoint.
	DefaultRTTWindow = 5
	// DefaultHookTimeout bounds one run of the suspend hook.
	DefaultHookTimeout = time.Minute
)

// Config configures seed 002 on live machines (docs/ENERGY.md,
// "Live"). The zero value learns thresholds with the defaults, measures
// the data endpoints jobs name and powers nothing down.
type Config struct {
	// Cluster is the cluster file (docs/CLUSTER.md), ClusterName its name
	// for messages; nil: none. A node that registers under the name of
	// one of its nodes gets that entry's class and power model (the
	// default thresholds before any are learned, and the model of the
	// energy of nodes without readings); its storage devices' endpoints
	// are probed.
	Cluster     *config.File
	ClusterName string
	// Calibration are the fit's options; zero fields take
	// calibrate.DefaultWindow and power.FitTolerance (a realistic curve
	// keeps falling gently until contention, never as flat as the command
	// line's default tolerance asks).
	Calibration calibrate.Options
	// MinNewSamples is how many new samples of an algorithm type a class
	// collects before it is calibrated again (and its samples must span
	// the load range); 0 means DefaultMinNewSamples.
	MinNewSamples int
	// RTTWindow is how many of the latest probes of an endpoint give its
	// median distance; 0 means DefaultRTTWindow.
	RTTWindow int
	// SuspendIdle reports nodes that stay idle for SuspendAfter as
	// power-down candidates and runs SuspendHook for each; the energy
	// placer then treats idle nodes as power-managed (it fills the nodes
	// that are on first). Nothing is powered down unless the hook does it.
	SuspendIdle bool
	// SuspendAfter is how long a node must stay idle; 0 means
	// DefaultSuspendAfter.
	SuspendAfter time.Duration
	// SuspendHook is a command (argv) run once per idle period of a
	// candidate, with GPUSCHED_NODE, GPUSCHED_NODE_ADDR and
	// GPUSCHED_IDLE_SINCE in its environment (e.g. a BMC call); empty:
	// none.
	SuspendHook []string
	// HookTimeout bounds one run of the hook; 0 means DefaultHookTimeout.
	HookTimeout time.Duration
}

// Defaults fills in the zero fields and checks the values.
func (c *Config) Defaults() error {
	if c.Calibration.Window == 0 {
		c.Calibration.Window = calibrate.DefaultWindow
	}
	if c.Calibration.Tolerance == 0 {
		c.Calibration.Tolerance = power.FitTolerance
	}
	if _, err := calibrate.Fit(nil, c.Calibration); err != nil && !errors.Is(err, calibrate.ErrTooFewSamples) {
		return fmt.Errorf("calibration: %w", err)
	}
	if c.MinNewSamples == 0 {
		c.MinNewSamples = DefaultMinNewSamples
	}
	if c.RTTWindow == 0 {
		c.RTTWindow = DefaultRTTWindow
	}
	if c.MinNewSamples < 1 || c.RTTWindow < 1 {
		return fmt.Errorf("min new samples %d and RTT window %d must be positive", c.MinNewSamples, c.RTTWindow)
	}
	if c.SuspendAfter <= 0 {
		c.SuspendAfter = DefaultSuspendAfter
	}
	if c.HookTimeout <= 0 {
		c.HookTimeout = DefaultHookTimeout
	}
	if len(c.SuspendHook) > 0 && c.SuspendHook[0] == "" {
		return errors.New("suspend hook: empty command")
	}
	return nil
}
