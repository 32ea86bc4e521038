package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gpusched/gpusched/sim/metrics"
)

// File names that Write creates in the report directory.
const (
	SummaryFile = "summary.json"
	JobsFile    = "jobs.csv"
	JCTCDFFile  = "jct_cdf.png"
	GPUUtilFile = "gpu_util.png"
	QueueFile   = "queue.png"
	PowerFile   = "power.png"
	// IndexFile is the self-contained HTML report (HTML).
	IndexFile = "index.html"
)

// output is one file of a report and the function that writes its content.
type output struct {
	name  string
	write func(io.Writer) error
}

// Write writes a whole report into dir (created if needed): summary.json
// (as JSON writes it), jobs.csv (as JobsCSV), index.html (HTML, titled with the run's policy, without timelines) and
// the plots jct_cdf.png, gpu_util.png, queue.png and power.png. samples are the cluster's occupancy
// change points and clusterGPUs, which must be positive, the cluster's size.
// The run accounted energy when s.EnergyKWh is set: then jobs.csv has the
// jobs' energy and power.png the samples' PowerW; otherwise the energy cells
// are empty and power.png says that there are no power figures. Every
// file is first written under a temporary name in dir and renamed into place
// once all have been written; on an error Write removes every file and
// directory it created, so no partial report is left behind.
func Write(dir string, s metrics.Summary, recs []metrics.JobRecord, samples []metrics.Sample, clusterGPUs int) error {
	r := Run{Name: s.Policy, Summary: s, Records: recs, Samples: samples, ClusterGPUs: clusterGPUs}
	return WriteRuns(dir, "gpusched sim: "+s.Policy+"/"+s.Placer+"/"+s.Scaler, []Run{r})
}

// WriteRuns writes the report of one run, or of several runs of the same
// trace, into dir (created if needed). One run: the files of Write, its
// index.html with the run's timelines. Several: each run's files in the
// subdirectory named by the run (its name with characters other than
// letters, digits, '.', '-', '+' and '_' replaced by '_'; names must stay
// distinct), and in dir an index.html comparing them and summaries.json
// (one summary per line, as JSON writes them). All or nothing, as Write.
func WriteRuns(dir, title string, runs []Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("report: write %s: no run", dir)
	}
	for _, r := range runs {
		if r.ClusterGPUs <= 0 {
			return fmt.Errorf("report: write %s: run %q: cluster GPUs %d, want > 0", dir, r.Name, r.ClusterGPUs)
		}
	}
	if len(runs) == 1 {
		outputs := runOutputs(runs[0])
		outputs = append(outputs, output{IndexFile, func(w io.Writer) error { return HTML(w, title, runs) }})
		if err := writeAll(dir, outputs); err != nil {
			return fmt.Errorf("report: write %s: %w", dir, err)
		}
		return nil
	}
	outputs, err := comparisonOutputs(title, runs)
	if err != nil {
		return fmt.Errorf("report: write %s: %w", dir, err)
	}
	if err := writeAll(dir, outputs); err != nil {
		return fmt.Errorf("report: write %s: %w", dir, err)
	}
	return nil
}

// runOutputs are the files of one run's report but its index.html.
func runOutputs(r Run) []output {
	s, recs, samples, clusterGPUs := r.Summary, r.Records, r.Samples, r.ClusterGPUs
	return []output{
		{SummaryFile, func(w io.Writer) error { return JSON(w, s) }},
		{JobsFile, func(w io.Writer) error { return JobsCSV(w, recs, s.EnergyKWh != nil) }},
		{JCTCDFFile, func(w io.Writer) error {
			p, err := jctCDFPlot(recs)
			if err != nil {
				return err
			}
			return writePNG(w, p)
		}},
		{GPUUtilFile, func(w io.Writer) error {
			p, err := utilPlot(samples, clusterGPUs)
			if err != nil {
				return err
			}
			return writePNG(w, p)
		}},
		{QueueFile, func(w io.Writer) error {
			p, err := queuePlot(samples)
			if err != nil {
				return err
			}
			return writePNG(w, p)
		}},
		{PowerFile, func(w io.Writer) error {
			p, err := powerPlot(samples, s.EnergyKWh)
			if err != nil {
				return err
			}
			return writePNG(w, p)
		}},
	}
}

// writeAll writes outputs into dir, all or nothing. An output's name may
// hold one directory level (run/summary.json): the subdirectory is made.
func writeAll(dir string, outputs []output) (err error) {
	createdDirs, err := makeDir(dir)
	if err != nil {
		return err
	}
	var created []string // temporary files, then final ones once renamed
	defer func() {
		if err == nil {
			return
		}
		for _, path := range created {
			_ = os.Remove(path)
		}
		for _, d := range createdDirs { // deepest first; only if empty
			_ = os.Remove(d)
		}
	}()
	for _, out := range outputs {
		sub := filepath.Join(dir, filepath.Dir(out.name))
		made, err := makeDir(sub)
		createdDirs = append(made, createdDirs...)
		if err != nil {
			return err
		}
		tmp, err := writeTemp(sub, output{filepath.Base(out.name), out.write})
		if tmp != "" {
			created = append(created, tmp)
		}
		if err != nil {
			return err
		}
	}
	for i, out := range outputs {
		final := filepath.Join(dir, out.name)
		if err := os.Rename(created[i], final); err != nil {
			return fmt.Errorf("rename %s: %w", out.name, err)
		}
		created[i] = final
	}
	return nil
}

// writeTemp writes out to a new temporary file in dir with mode 0644 and
// returns its path; the path is returned even on error once the file exists.
func writeTemp(dir string, out output) (path string, err error) {
	f, err := os.CreateTemp(dir, "."+out.name+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("create %s: %w", out.name, err)
	}
	path = f.Name()
	bw := bufio.NewWriterSize(f, 64<<10)
	err = out.write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return path, fmt.Errorf("write %s: %w", out.name, err)
	}
	return path, nil
}

// makeDir creates dir and any missing parents and returns the directories it
// created, deepest first.
func makeDir(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		for _, d := range missing {
			_ = os.Remove(d)
		}
		return nil, fmt.Errorf("create directory: %w", err)
	}
	return missing, nil
}
