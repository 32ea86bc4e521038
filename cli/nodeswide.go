package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

// writeNodesWide prints one line per node with what its jobs use and have
// left of its CPUs, memory and named resources, and seed 002's view of it:
// the nodes table plus those, its class, load state, the default
// algorithm type's thresholds with their source, samples and fit quality,
// the measured distances and the energy it drew.
func writeNodesWide(w io.Writer, nodes []api.Node, now time.Time) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tSTATE\tGPUS\tUSED\tTYPE\tCPU-USED\tCPU-FREE\tMEM-USED\tMEM-FREE\tOTHER(USED/FREE)\t"+
		"CLASS\tLOAD-STATE\tTH1\tTH2\tSOURCE\tSAMPLES\tFIT\tRTT\tENERGY\tIDLE\tLAST-HEARTBEAT")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", cell(n.Name), cell(string(n.State)), len(n.GPUs), n.GPUsUsed,
			gpuTypes(n.GPUs), resourceColumns(n), energyColumns(n.Energy, now), ago(n.LastHeartbeat, now))
	}
	return tw.Flush()
}

// resourceColumns are a node's CPUs and memory, used and free, and its
// named resources as NAME=USED/FREE; "-" for what it does not report.
func resourceColumns(n api.Node) string {
	capa, err1 := api.ParseResources("capacity", n.Capacity)
	used, err2 := api.ParseResources("used", n.Used)
	if err1 != nil || err2 != nil {
		return strings.Repeat("?\t", 4) + "?"
	}
	usedFree := func(name string) (string, string) {
		c, ok := capa[name]
		if !ok {
			return "-", "-"
		}
		return model.FormatAmount(name, used[name]), model.FormatAmount(name, c-used[name])
	}
	cu, cf := usedFree(model.ResourceCPU)
	mu, mf := usedFree(model.ResourceMemory)
	var other []string
	for _, name := range capa.Names() {
		if name != model.ResourceCPU && name != model.ResourceMemory {
			u, f := usedFree(name)
			other = append(other, name+"="+u+"/"+f)
		}
	}
	if len(other) == 0 {
		other = []string{"-"}
	}
	return strings.Join([]string{cu, cf, mu, mf, cell(strings.Join(other, ","))}, "\t")
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
