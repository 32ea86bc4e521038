package cli

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/kube"
)

// progressTimeout bounds `gpusched progress` (a training loop calls it).
const progressTimeout = 20 * time.Second

func newProgressCommand() *cobra.Command {
	var o kube.ClientOptions
	var pod, ns string
	var p kube.Progress
	cmd := &cobra.Command{
		Use:   "progress --steps N [--checkpoint] [--pod NAME] [--namespace NS] [--kubeconfig FILE]",
		Short: "Report a Kubernetes training pod's progress and checkpoints to gpusched",
		Long: "progress writes a training container's progress into its own pod's annotations,\n" +
			"which `gpusched kube` reads: gpusched.io/steps, and with --checkpoint also\n" +
			"gpusched.io/checkpoint-steps and gpusched.io/last-checkpoint (now). The checkpoint\n" +
			"decides which job a preemption stops (the one that loses the least work); steps\n" +
			"teach gpusched the job's speed. Inside a pod it uses the pod's service account\n" +
			"(which needs patch on pods) and finds its pod by $POD_NAME (else the host name)\n" +
			"and $POD_NAMESPACE (else its service account's namespace).",
		Example: "  gpusched progress --steps 1200\n  gpusched progress --steps 1500 --checkpoint",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("steps") {
				return badInput("--steps is required")
			}
			if p.Steps < 0 {
				return badInput("--steps %d: must not be negative", p.Steps)
			}
			if pod == "" {
				pod = os.Getenv("POD_NAME")
			}
			if pod == "" {
				h, err := os.Hostname()
				if err != nil || h == "" {
					return badInput("--pod: not given, $POD_NAME is empty and the host name is unknown")
				}
				pod = h
			}
			if ns == "" {
				ns = kube.DefaultNamespace()
			}
			o.UserAgent, o.QPS, o.Burst = "gpusched-progress", 5, 10
			rc, from, err := kube.RESTConfig(o)
			if err != nil {
				return usageError{err}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), progressTimeout)
			defer cancel()
			client, err := kube.Connect(ctx, rc, from, progressTimeout)
			if errors.Is(err, kube.ErrConfig) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			return kube.ReportProgress(ctx, client, ns, pod, p, time.Now())
		},
	}
	f := cmd.Flags()
	f.Int64Var(&p.Steps, "steps", 0, "training steps done so far")
	f.BoolVar(&p.Checkpoint, "checkpoint", false, "a checkpoint of this step has just been written")
	f.StringVar(&pod, "pod", "", "the pod (default: $POD_NAME, else the host name)")
	f.StringVar(&ns, "namespace", "", "the pod's namespace (default: $POD_NAMESPACE, else the service account's)")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: the in-cluster service account in a pod)")
	return cmd
}
