package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/core/calibrate"
)

// calibrateOptions are the flags of `gpusched calibrate`.
type calibrateOptions struct {
	samples string
	json    bool
	opts    calibrate.Options
	// fromServer asks the server at server to recalibrate from the power
	// samples it keeps (calibrateserver.go).
	fromServer bool
	server     string
}

func newCalibrateCommand() *cobra.Command {
	o := &calibrateOptions{}
	cmd := &cobra.Command{
		Use:   "calibrate (--samples FILE.csv | --from-server [--server URL]) [--json]",
		Short: "Derive seed 002's load thresholds th1, th2 from power samples of a load ramp",
		Long: "calibrate reads the samples of a load ramp (a CSV file with the columns load,\n" +
			"power_w, throughput and optionally type) and prints, for every algorithm type,\n" +
			"the thresholds of seed 002's load states: th1 where energy per unit of work\n" +
			"stops falling, th2 where it starts rising (docs/ENERGY.md). Thresholds are\n" +
			"rounded to two decimals.\n\n" +
			"--from-server asks a running scheduler service to fit, now, every node class and\n" +
			"algorithm type from the power samples it keeps, with the same algorithm, and\n" +
			"prints the thresholds it uses afterwards (docs/ENERGY.md, \"Learned thresholds\").",
		Example: "  gpusched calibrate --samples testdata/calibrate/ramp.csv\n" +
			"  gpusched calibrate --samples ramp.csv --json\n" +
			"  gpusched calibrate --samples noisy.csv --window 0.15\n" +
			"  gpusched calibrate --from-server --server http://head:7070",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.fromServer {
				return runCalibrateFromServer(cmd, o)
			}
			return runCalibrate(o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.samples, "samples", "", "CSV file of ramp samples: load (0..1), power_w, throughput and optionally type (required)")
	f.BoolVar(&o.json, "json", false, `print one JSON object keyed by type: {"default":{"th1":0.31,"th2":0.78}}`)
	f.Float64Var(&o.opts.Window, "window", calibrate.DefaultWindow, "smoothing window, as a width in load units")
	f.Float64Var(&o.opts.Tolerance, "tolerance", calibrate.DefaultTolerance, "slope below which the curve is stable, relative to its stable level per unit of load")
	f.BoolVar(&o.fromServer, "from-server", false, "recalibrate on the scheduler service from the power samples it keeps, and print its thresholds")
	f.StringVar(&o.server, "server", "", "with --from-server: the scheduler service URL (default $GPUSCHED_SERVER, else http://127.0.0.1:7070)")
	return cmd
}

// runCalibrate reads the samples, fits every type and prints the thresholds.
// Every failure is bad input: an unreadable file, a malformed one, or a ramp
// that does not calibrate.
func runCalibrate(o *calibrateOptions, stdout io.Writer) error {
	if o.samples == "" {
		return badInput("calibrate: --samples FILE.csv is required")
	}
	f, err := os.Open(o.samples)
	if err != nil {
		return badInput("--samples: %w", err)
	}
	defer f.Close()
	byType, err := calibrate.ParseCSV(o.samples, f)
	if err != nil {
		return usageError{err}
	}
	th, err := calibrate.FitAll(byType, o.opts)
	if err != nil {
		return badInput("calibrate %s: %w", o.samples, err)
	}
	for typ, t := range th {
		th[typ] = calibrate.Thresholds{Th1: round2(t.Th1), Th2: round2(t.Th2)}
	}
	if o.json {
		return writeThresholdsJSON(stdout, th)
	}
	return writeThresholdsTable(stdout, th)
}

// round2 rounds v to two decimals: the thresholds are not more precise than
// the smoothing window and the sample spacing.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// writeThresholdsJSON writes th as one JSON object keyed by type, the keys
// sorted, on one line.
func writeThresholdsJSON(w io.Writer, th map[string]calibrate.Thresholds) error {
	b, err := json.Marshal(th)
	if err != nil {
		return fmt.Errorf("encode thresholds: %w", err)
	}
	if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
		return fmt.Errorf("write thresholds: %w", err)
	}
	return nil
}

// writeThresholdsTable writes th as an aligned table, one type per line,
// sorted by type.
func writeThresholdsTable(w io.Writer, th map[string]calibrate.Thresholds) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tTH1\tTH2")
	for _, typ := range slices.Sorted(maps.Keys(th)) {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\n", typ, th[typ].Th1, th[typ].Th2)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write thresholds: %w", err)
	}
	return nil
}
