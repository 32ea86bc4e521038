package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// writeNodesWide prints one line per node with seed 002's view of it: the
// nodes table plus its class, load state, the default algorithm type's
// thresholds with their source, samples and fit quality, the measured
// distances and the energy it drew.
func writeNodesWide(w io.Writer, nodes []api.Node, now time.Time) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tSTATE\tGPUS\tUSED\tTYPE\tCLASS\tLOAD-STATE\tTH1\tTH2\tSOURCE\tSAMPLES\tFIT\tRTT\tENERGY\tIDLE\tLAST-HEARTBEAT")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", cell(n.Name), cell(string(n.State)), len(n.GPUs), n.GPUsUsed,
			gpuTypes(n.GPUs), energyColumns(n.Energy, now), ago(n.LastHeartbeat, now))
	}
	return tw.Flush()
}

// energyColumns are the wide columns of a node's seed 002 view.
func energyColumns(e *api.NodeEnergy, now time.Time) string {
	if e == nil {
		return strings.Repeat("-\t", 9) + "-"
	}
	state := "-"
	if e.LoadState > 0 {
		state = fmt.Sprint(e.LoadState)
	}
	th, src, samples, fit := "-\t-", "-", "-", "-"
	if len(e.Thresholds) > 0 {
		t := e.Thresholds[0]
		th, src = fmt.Sprintf("%.2f\t%.2f", t.Th1, t.Th2), t.Source
		samples = fmt.Sprintf("(%d new)", t.NewSamples)
		if t.Source == api.ThresholdsLearned {
			samples, fit = fmt.Sprint(t.Samples), noiseText(t)
		}
		if t.Error != "" {
			fit = "failed"
		}
	}
	idle := "-"
	if e.IdleSince != nil {
		idle = ago(*e.IdleSince, now)
		if e.PowerDownCandidate {
			idle += " (power-down candidate)"
		}
	}
	return strings.Join([]string{cell(e.Class), state, th, src, samples, fit, rttText(e.RTTs), nodeEnergyText(e), idle}, "\t")
}

// rttText lists the measured distances as storage=median, "-" without any.
func rttText(rtts []api.EndpointRTT) string {
	var out []string
	for _, r := range rtts {
		switch {
		case !r.Reachable:
			out = append(out, r.Storage+"=unreachable")
		case r.Samples > 0:
			out = append(out, fmt.Sprintf("%s=%.2fms", r.Storage, r.RTTMs))
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return cell(strings.Join(out, ","))
}

// nodeEnergyText is a node's energy, marked when part of it is modelled.
func nodeEnergyText(e *api.NodeEnergy) string {
	s := kWhText(e.EnergyKWh)
	if e.EnergyModelledKWh > 0 {
		s += " (modelled " + kWhText(e.EnergyModelledKWh) + ")"
	}
	return s
}
