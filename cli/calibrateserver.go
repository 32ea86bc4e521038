package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/api"
)

// runCalibrateFromServer asks the server to recalibrate every class and
// algorithm type from the samples it keeps and prints the thresholds it
// uses afterwards. --samples, --window and --tolerance do not apply (the
// server's calibration settings do).
func runCalibrateFromServer(cmd *cobra.Command, o *calibrateOptions) error {
	f := cmd.Flags()
	for _, name := range []string{"samples", "window", "tolerance"} {
		if f.Changed(name) {
			return badInput("calibrate: --%s does not go with --from-server (the server fits with its own settings)", name)
		}
	}
	c, err := (&clientOptions{server: o.server}).connect()
	if err != nil {
		return err
	}
	ctx, cancel := callContext(cmd)
	defer cancel()
	cal, err := c.Recalibrate(ctx)
	if err != nil {
		return clientError(err, "")
	}
	if o.json {
		return writeValue(cmd.OutOrStdout(), outJSON, cal)
	}
	return writeCalibrationTable(cmd.OutOrStdout(), cal)
}

// writeCalibrationTable prints one line per class and algorithm type.
func writeCalibrationTable(w io.Writer, cal api.Calibration) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "CLASS\tTYPE\tTH1\tTH2\tSOURCE\tSAMPLES\tNOISE\tNODES\tERROR")
	for _, c := range cal.Classes {
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\n", cell(c.Class), cell(c.Family), c.Th1, c.Th2, c.Source,
			fitSamples(c.Thresholds, c.Rows), noiseText(c.Thresholds), cell(strings.Join(c.Nodes, ",")), cell(c.Error))
	}
	return tw.Flush()
}

// fitSamples shows a learned fit's rows, or the rows collected so far.
func fitSamples(t api.Thresholds, rows int) string {
	if t.Source == api.ThresholdsLearned {
		return fmt.Sprint(t.Samples)
	}
	return fmt.Sprintf("(%d)", rows)
}

// noiseText shows a learned fit's quality as the readings' scatter.
func noiseText(t api.Thresholds) string {
	if t.Source != api.ThresholdsLearned {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*t.Noise)
}
