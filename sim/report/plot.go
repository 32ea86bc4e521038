package report

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/gpusched/gpusched/sim/metrics"
)

const (
	// plotWidth and plotHeight are the size of every plot.
	plotWidth  = 6 * vg.Inch
	plotHeight = 4 * vg.Inch
	// maxPoints bounds the points of one drawn series.
	maxPoints = 2000
	// logDecades is the span, in decades, beyond which the JCT axis is
	// logarithmic.
	logDecades = 2
)

// timeUnit is a unit for a time axis.
type timeUnit struct {
	name    string  // "s", "min", "h"
	seconds float64 // seconds per unit
}

// unitFor picks the unit for an axis whose largest value is maxSeconds:
// hours from two hours up, minutes from two minutes up, else seconds.
func unitFor(maxSeconds float64) timeUnit {
	switch {
	case maxSeconds >= 2*3600:
		return timeUnit{"h", 3600}
	case maxSeconds >= 2*60:
		return timeUnit{"min", 60}
	default:
		return timeUnit{"s", 1}
	}
}

// writePNG draws p as a PNG onto w.
func writePNG(w io.Writer, p *plot.Plot) error {
	wt, err := p.WriterTo(plotWidth, plotHeight, "png")
	if err != nil {
		return fmt.Errorf("draw %q: %w", p.Title.Text, err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("encode %q: %w", p.Title.Text, err)
	}
	return nil
}

// newPlot returns a plot with a grid, a title and axis labels.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// addStep adds xys to p as a post-step line (each point holds until the
// next); for an empty series it only sets unit ranges on both axes.
func addStep(p *plot.Plot, xys plotter.XYs, c color.Color) error {
	if len(xys) == 0 {
		p.X.Min, p.X.Max = 0, 1
		p.Y.Min, p.Y.Max = 0, 1
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("plot %q: %w", p.Title.Text, err)
	}
	l.StepStyle = plotter.PostStep
	l.Color = c
	l.Width = vg.Points(1.5)
	p.Add(l)
	return nil
}

// jctCDFPlot draws the empirical CDF of the JCTs of the completed jobs.
func jctCDFPlot(recs []metrics.JobRecord) (*plot.Plot, error) {
	var jcts []float64
	for i := range recs {
		if recs[i].Completed() {
			jcts = append(jcts, recs[i].JCT().Seconds())
		}
	}
	slices.Sort(jcts)
	title := "JCT CDF (" + group(strconv.Itoa(len(jcts))) + " completed jobs)"
	if len(jcts) == 0 {
		title = "JCT CDF (no completed jobs)"
	}
	p := newPlot(title, "", "fraction of completed jobs")
	p.Y.Min, p.Y.Max = 0, 1
	unit := timeUnit{"s", 1}
	logX := len(jcts) > 0 && jcts[0] > 0 && jcts[len(jcts)-1] > jcts[0]*pow10(logDecades)
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	} else if len(jcts) > 0 {
		unit = unitFor(jcts[len(jcts)-1])
		p.X.Min = 0
	}
	p.X.Label.Text = "JCT (" + unit.name + ")"
	if logX {
		p.X.Label.Text = "JCT (s, log scale)"
	}
	xys := cdfPoints(jcts, maxPoints)
	for i := range xys {
		xys[i].X /= unit.seconds
	}
	return p, addStep(p, xys, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff})
}

// pow10 returns 10**n for n >= 0.
func pow10(n int) float64 {
	f := 1.0
	for range n {
		f *= 10
	}
	return f
}

// cdfPoints returns the step points of the empirical CDF of sorted: a start
// at (sorted[0], 0) and then (sorted[i], (i+1)/n) for at most limit evenly
// spaced ranks i, always including the last.
func cdfPoints(sorted []float64, limit int) plotter.XYs {
	n := len(sorted)
	if n == 0 {
		return nil
	}
	m := min(n, limit)
	xys := make(plotter.XYs, 0, m+1)
	xys = append(xys, plotter.XY{X: sorted[0], Y: 0})
	for k := range m {
		i := ((k+1)*n+m-1)/m - 1 // ceil((k+1)·n/m) − 1
		xys = append(xys, plotter.XY{X: sorted[i], Y: float64(i+1) / float64(n)})
	}
	return xys
}

// sortedSamples returns samples in time order (stable), copying only when
// they are not already sorted.
func sortedSamples(samples []metrics.Sample) []metrics.Sample {
	byTime := func(a, b metrics.Sample) int { return cmp.Compare(a.T, b.T) }
	if slices.IsSortedFunc(samples, byTime) {
		return samples
	}
	s := slices.Clone(samples)
	slices.SortStableFunc(s, byTime)
	return s
}

// timePlot draws value over time as a step line of at most maxPoints points.
func timePlot(samples []metrics.Sample, title, y string, c color.Color, value func(metrics.Sample) float64) (*plot.Plot, error) {
	samples = sortedSamples(samples)
	unit := timeUnit{"s", 1}
	if len(samples) > 0 {
		unit = unitFor(samples[len(samples)-1].T.Seconds())
	} else {
		title += " (no samples)"
	}
	p := newPlot(title, "simulated time ("+unit.name+")", y)
	p.X.Min, p.Y.Min = 0, 0 // simulated time counts from the first submission
	xys := downsample(samples, maxPoints, value)
	for i := range xys {
		xys[i].X /= unit.seconds
	}
	return p, addStep(p, xys, c)
}

// utilPlot draws busy GPUs ÷ clusterGPUs, in percent, over time.
func utilPlot(samples []metrics.Sample, clusterGPUs int) (*plot.Plot, error) {
	y := fmt.Sprintf("busy GPUs (%% of %d)", clusterGPUs)
	red := color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	p, err := timePlot(samples, "GPU utilisation", y, red, func(s metrics.Sample) float64 {
		return 100 * float64(s.BusyGPUs) / float64(clusterGPUs)
	})
	p.Y.Max = max(p.Y.Max, 100)
	return p, err
}

// queuePlot draws the number of queued jobs over time.
func queuePlot(samples []metrics.Sample) (*plot.Plot, error) {
	green := color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	return timePlot(samples, "Queue length", "queued jobs", green, func(s metrics.Sample) float64 {
		return float64(s.Queued)
	})
}

// powerPlot draws the cluster's draw (the samples' PowerW) in kW over time,
// with the run's energy in the title; energyKWh nil means that the run
// accounted no energy, and the plot says so instead.
func powerPlot(samples []metrics.Sample, energyKWh *float64) (*plot.Plot, error) {
	purple := color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}
	if energyKWh == nil {
		p := newPlot("Cluster power (no power figures for a GPU type)", "simulated time (s)", "cluster draw (kW)")
		return p, addStep(p, nil, purple)
	}
	title := "Cluster power (" + group(strconv.FormatFloat(*energyKWh, 'f', 1, 64)) + " kWh)"
	return timePlot(samples, title, "cluster draw (kW)", purple, func(s metrics.Sample) float64 {
		return s.PowerW / 1000
	})
}
