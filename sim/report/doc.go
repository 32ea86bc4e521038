// Package report renders the outputs of `gpusched sim`: the summary as a
// table or as JSON, the per-job CSV, and the plots that `--report DIR` writes.
//
// # Summary
//
// [Table] and [JSON] walk the fields of [metrics.Summary] in declaration order
// and name them by their JSON keys, so a field added to the summary appears
// in both without a change here. JSON writes floats in their shortest
// exact decimal form (strconv's 'f' format with precision -1), so that the
// output is byte-identical for the same input and precise enough to be
// checked against the event log; a NaN or infinite float is written as null. A
// pointer field is a figure that may be unknown: nil is left out of the JSON
// when its tag says omitempty (energy_kwh of a run without power figures) and
// shown as "n/a" in the table. Table shows keys ending in "_s" as seconds
// (and humanized from one minute up), keys ending in "_util" as percentages,
// keys ending in "_kwh" in kWh with three decimals, and integers with
// thousands separators.
//
// # Per-job CSV
//
// [JobsCSV] writes one row per record in the given order. Times are in
// seconds with millisecond precision and no trailing zeros (the event log's
// form, [model.Time.SecondsString]); start_s, queue_s, gpus and gpu_type are
// empty for a job that never started, finish_s and jct_s for one that never
// finished. state is "rejected" when the record says so, else "finished" or
// "unfinished". energy_kwh is the job's energy in its shortest exact form, or
// empty when the run accounted no energy.
//
// # Plots
//
// [Write] draws four 6×4-inch PNGs with gonum/plot: the CDF of the JCT of
// completed jobs (log-x in seconds when the JCTs span more than two decades
// and are all positive, else linear in seconds, minutes or hours), the GPU
// utilisation (busy GPUs ÷ cluster GPUs, in percent), the queue length and
// the cluster's power draw (kW, with the run's energy in the title; a blank
// plot saying so when the run accounted no energy) over time. Samples are change points: each holds until the next one, so the
// time series are drawn as step lines. A series with more than 2,000 samples
// is downsampled to at most 2,000 equal-width time buckets, each showing the
// time-weighted mean of the series over the bucket (so the area under the
// curve, e.g. GPU-hours, is preserved; short spikes are flattened). The CDF
// of more than 2,000 jobs is drawn through 2,000 evenly spaced order
// statistics. Plotting 200,000 samples stays well under a second.
//
// # HTML
//
// [HTML] renders one self-contained page for one run or a comparison of
// several ([Run]: summary, records, samples, and the [Timeline]s of
// selected jobs that a [TimelineSink] kept from the event log): the
// summary table (as [Table] formats it, the best figure of each row marked
// when runs are compared), bars of the headline figures, the JCT CDFs
// (evaluated at 400 JCTs, log-spaced when they span more than two
// decades), GPU utilisation, queue length and power as time-weighted means
// over 1,000 equal buckets, and the timelines as SVG bars. Its data,
// script, styles and the chart library (uPlot, package web) are inlined.
// [WriteRuns] writes a report directory for one run (the files of Write,
// index.html with timelines) or for several (each run's files in a
// subdirectory named by [RunDir], index.html and summaries.json).
//
// # Files
//
// [Write] writes every file under a temporary name in the report directory
// and renames them into place only once all of them have been written; on
// an error it removes every file and directory it created.
package report
