package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/internal/assets/web"
	"github.com/gpusched/gpusched/sim/metrics"
)

// Run is one simulation run as the HTML report shows it.
type Run struct {
	// Name labels the run (its policy, or policy+placer+scaler).
	Name    string
	Summary metrics.Summary
	Records []metrics.JobRecord
	Samples []metrics.Sample
	// ClusterGPUs is the cluster's size (positive).
	ClusterGPUs int
	// Timelines are the histories of the jobs to show (TimelineSink).
	Timelines []Timeline
}

//go:embed html/report.js
var reportJS string

//go:embed html/report.css
var reportCSS string

//go:embed html/report.html
var reportPage string

var reportTemplate = template.Must(template.New("report").Parse(reportPage))

// HTML writes one self-contained page comparing runs (one or more of the
// same trace): the summary table, the JCT CDFs, GPU utilisation, queue
// length and power over time, and the timelines of selected jobs. Its
// scripts (uPlot and the page's own), styles and data are inlined: the
// page loads nothing. The same runs give the same bytes.
func HTML(w io.Writer, title string, runs []Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("report: no run to show")
	}
	for _, r := range runs {
		if r.ClusterGPUs <= 0 {
			return fmt.Errorf("report: run %q: cluster GPUs %d, want > 0", r.Name, r.ClusterGPUs)
		}
	}
	data, err := json.Marshal(htmlData(title, runs))
	if err != nil {
		return fmt.Errorf("report: encode the page's data: %w", err)
	}
	var b bytes.Buffer
	err = reportTemplate.Execute(&b, map[string]any{
		"Title": title, "Data": template.JS(data), "Script": template.JS(reportJS), "Style": template.CSS(reportCSS),
		"UPlot": template.JS(web.UPlotJS()), "UPlotCSS": template.CSS(web.UPlotCSS()),
		"UPlotLicense": string(web.UPlotLicense()), "UPlotVersion": web.UPlotVersion(),
	})
	if err != nil {
		return fmt.Errorf("report: render the page: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// pageData is what the page's script draws.
type pageData struct {
	Title string    `json:"title"`
	Runs  []runData `json:"runs"`
	// Rows are the summary table: one row per summary field, one value
	// per run, formatted as the CLI's table formats them.
	Rows []summaryRow `json:"rows"`
	// Unit and UnitS are the time axis's unit and its seconds; Time the
	// bucket starts in that unit.
	Unit  string  `json:"unit"`
	UnitS float64 `json:"unit_s"`
	Time  nums    `json:"time"`
	// Util (percent), Queue (jobs) and Power (kW) per run, per bucket.
	Util  []nums `json:"util"`
	Queue []nums `json:"queue"`
	Power []nums `json:"power"`
	// CDFX are the JCTs (seconds) at which CDF gives each run's fraction
	// of completed jobs; LogX says the grid is logarithmic.
	CDFX nums   `json:"cdf_x"`
	CDF  []nums `json:"cdf"`
	LogX bool   `json:"log_x"`
}

// runData is one run's headline and timelines.
type runData struct {
	Name      string     `json:"name"`
	GPUs      int        `json:"gpus"`
	Jobs      int        `json:"jobs"`
	Energy    bool       `json:"energy"`
	Timelines []Timeline `json:"timelines"`
}

// summaryRow is one summary field across runs; Values are formatted,
// Raw are the numbers (null for text or unknown) to mark the best.
type summaryRow struct {
	Key    string   `json:"key"`
	Label  string   `json:"label"`
	Values []string `json:"values"`
	Raw    nums     `json:"raw"`
}

// nums is a list of numbers whose NaNs are written as null.
type nums []float64

// MarshalJSON writes the numbers in their shortest form, NaN and
// infinities as null.
func (n nums) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, f := range n {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, f, 'g', 6, 64)
	}
	return append(b, ']'), nil
}

// htmlData computes what the page draws.
func htmlData(title string, runs []Run) pageData {
	d := pageData{Title: title}
	var t0, t1 model.Time = math.MaxInt64, math.MinInt64
	for _, r := range runs {
		d.Runs = append(d.Runs, runData{Name: r.Name, GPUs: r.ClusterGPUs, Jobs: r.Summary.Jobs,
			Energy: r.Summary.EnergyKWh != nil, Timelines: nonNil(r.Timelines)})
		s := sortedSamples(r.Samples)
		if len(s) > 0 {
			t0, t1 = min(t0, s[0].T), max(t1, s[len(s)-1].T)
		}
	}
	d.Rows = summaryRows(runs)
	if t0 >= t1 {
		t0, t1 = 0, 1000
	}
	u := unitFor((t1 - t0).Seconds())
	d.Unit, d.UnitS = u.name, u.seconds
	for k := range htmlBuckets {
		d.Time = append(d.Time, (t0+model.Time(float64(t1-t0)*float64(k)/htmlBuckets)).Seconds()/u.seconds)
	}
	var all [][]float64
	for _, r := range runs {
		s := sortedSamples(r.Samples)
		gpus := float64(r.ClusterGPUs)
		d.Util = append(d.Util, bucketMeans(s, t1, t0, t1, htmlBuckets, func(x metrics.Sample) float64 { return 100 * float64(x.BusyGPUs) / gpus }))
		d.Queue = append(d.Queue, bucketMeans(s, t1, t0, t1, htmlBuckets, func(x metrics.Sample) float64 { return float64(x.Queued) }))
		pw := bucketMeans(s, t1, t0, t1, htmlBuckets, func(x metrics.Sample) float64 { return x.PowerW / 1000 })
		if r.Summary.EnergyKWh == nil {
			for i := range pw {
				pw[i] = math.NaN()
			}
		}
		d.Power = append(d.Power, pw)
		all = append(all, jcts(r.Records))
	}
	xs, logX := cdfGrid(all, htmlCDFPoints)
	d.CDFX, d.LogX = xs, logX
	for _, js := range all {
		d.CDF = append(d.CDF, cdfAt(js, xs))
	}
	return d
}

// summaryRows is the summary table: every field of metrics.Summary that
// some run has, formatted as Table formats it.
func summaryRows(runs []Run) []summaryRow {
	var rows []summaryRow
	for i, f := range summaryFields(runs[0].Summary) {
		if f.key == resourceUtilKey {
			rows = append(rows, resourceRows(runs)...)
			continue
		}
		if f.val.Kind() == reflect.Map {
			continue // reason counts: in each run's own summary
		}
		if vectorOnly(f.key) && !slices.ContainsFunc(runs, func(r Run) bool { return !summaryFields(r.Summary)[i].empty() }) {
			continue
		}
		row := summaryRow{Key: f.key, Label: label(f.key)}
		for _, r := range runs {
			v := summaryFields(r.Summary)[i].val
			row.Values = append(row.Values, tableValue(f.key, v))
			row.Raw = append(row.Raw, rawNumber(v))
		}
		rows = append(rows, row)
	}
	return rows
}

// resourceRows are the summary rows of the resources' utilisation, one
// per resource that some run has, by name; none for GPU-only runs.
func resourceRows(runs []Run) []summaryRow {
	names := map[string]bool{}
	for _, r := range runs {
		for n := range r.Summary.ResourceUtil {
			names[n] = true
		}
	}
	var rows []summaryRow
	for _, n := range slices.Sorted(maps.Keys(names)) {
		row := summaryRow{Key: n + "_util", Label: resourceLabel(n)}
		for _, r := range runs {
			v, ok := r.Summary.ResourceUtil[n]
			if !ok {
				v = math.NaN()
			}
			row.Values = append(row.Values, tableFloat("_util", v))
			row.Raw = append(row.Raw, v)
		}
		rows = append(rows, row)
	}
	return rows
}

// rawNumber is a numeric field's value, NaN for text or an unknown figure.
func rawNumber(v reflect.Value) float64 {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return math.NaN()
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return float64(v.Int())
	case reflect.Float64, reflect.Float32:
		return v.Float()
	}
	return math.NaN()
}

func nonNil(t []Timeline) []Timeline {
	if t == nil {
		return []Timeline{}
	}
	return t
}
