package cli

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/client"
)

// powerSamplesOptions are the flags of `gpusched power-samples`.
type powerSamplesOptions struct {
	clientOptions
	nodes []string
}

func newPowerSamplesCommand() *cobra.Command {
	o := &powerSamplesOptions{}
	cmd := &cobra.Command{
		Use:   "power-samples --node NODE [--node NODE...] [--server URL] [--token T] [--ca FILE]",
		Short: "Print nodes' power samples as the CSV that gpusched calibrate --samples reads",
		Long: "power-samples prints the (load, power, throughput) samples the server kept from\n" +
			"the nodes' power readings, one row per node and load (the mean of its samples),\n" +
			"as CSV with the columns type,load,power_w,throughput where type is the node's\n" +
			"name: save it and run gpusched calibrate --samples FILE. docs/ENERGY.md, power\n" +
			"readings, says what each column measures.",
		Example: "  gpusched power-samples --node gpu7 > gpu7.csv && gpusched calibrate --samples gpu7.csv\n" +
			"  gpusched power-samples --node gpu7 --node gpu8",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPowerSamples(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.server, "server", "", "scheduler service URL (default $"+client.EnvServer+", else "+client.DefaultServer+")")
	f.StringArrayVar(&o.nodes, "node", nil, "node whose samples to print (repeat for several; required)")
	o.addCredentialFlags(cmd)
	return cmd
}

// runPowerSamples fetches every node's CSV and prints them under one
// header.
func runPowerSamples(cmd *cobra.Command, o *powerSamplesOptions) error {
	if len(o.nodes) == 0 {
		return badInput("power-samples: --node NODE is required")
	}
	c, err := o.connect()
	if err != nil {
		return err
	}
	ctx, cancel := callContext(cmd)
	defer cancel()
	var out bytes.Buffer
	for i, n := range o.nodes {
		data, err := c.PowerSamples(ctx, n)
		if err != nil {
			return fmt.Errorf("node %s: %w", n, clientError(err, ""))
		}
		if i > 0 { // one header for all
			if _, rest, ok := bytes.Cut(data, []byte("\n")); ok {
				data = rest
			}
		}
		out.Write(data)
	}
	_, err = cmd.OutOrStdout().Write(out.Bytes())
	return err
}
