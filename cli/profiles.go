package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/client"
)

// profilesOptions are the flags of `gpusched profiles`.
type profilesOptions struct {
	clientOptions
	all bool
}

func newProfilesCommand() *cobra.Command {
	o := &profilesOptions{}
	cmd := &cobra.Command{
		Use:   "profiles [--all] [-o table|json|yaml]",
		Short: "List the job throughputs the server learned from progress reports (online profiles)",
		Long: "profiles lists, per job type (a job's model), GPU type and GPU count, the\n" +
			"training steps per second the server measured from the progress reports of\n" +
			"running jobs, and the number of samples behind each estimate. The scheduler\n" +
			"uses the pre-run throughput matrix with these measurements laid over it;\n" +
			"--all lists the pre-run points too (SOURCE pre-run). docs/PROFILES.md.",
		Example: "  gpusched profiles\n" +
			"  gpusched profiles --all -o json | jq '.[] | select(.model==\"my-bert\")'",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return call(cmd, &o.clientOptions, "",
				func(ctx context.Context, c *client.Client) ([]api.ProfileEntry, error) { return c.Profiles(ctx, o.all) },
				writeProfilesTable)
		},
	}
	addClientFlags(cmd, &o.clientOptions)
	cmd.Flags().BoolVar(&o.all, "all", false, "also list the pre-run throughput matrix's points")
	return cmd
}

// writeProfilesTable prints one line per profile entry.
func writeProfilesTable(w io.Writer, ps []api.ProfileEntry) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "MODEL\tGPU-TYPE\tGPUS\tSTEPS/S\tSAMPLES\tSOURCE")
	for _, p := range ps {
		samples := "-"
		if p.Samples > 0 {
			samples = strconv.FormatInt(p.Samples, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", cell(p.Model), cell(p.GPUType), p.GPUs,
			strconv.FormatFloat(p.StepsPerS, 'g', 4, 64), samples, cell(p.Source))
	}
	return tw.Flush()
}
