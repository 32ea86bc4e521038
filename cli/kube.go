package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/kube"
)

// connectTimeout bounds the first request to the API server.
const connectTimeout = 15 * time.Second

// kubeOptions are the flags of `gpusched kube`.
type kubeOptions struct {
	client                       kube.ClientOptions
	schedulerName, config        string
	names                        recipe.Names
	metricsAddr, namespace       string
	leaseName, nodeSelector      string
	leaderElect, verbose         bool
	insecure                     bool
	cpuProfile                   string
	leaseDuration, renewDeadline time.Duration
	retryPeriod                  time.Duration
	bindWorkers                  int
	given                        func(flag string) bool
}

func newKubeCommand() *cobra.Command {
	o := &kubeOptions{}
	cmd := &cobra.Command{
		Use:   "kube [--kubeconfig FILE] [--scheduler-name gpusched] [--policy P --placer P | --config FILE] [--leader-elect]",
		Short: "Schedule the Kubernetes pods that name gpusched as their scheduler",
		Long: "kube runs gpusched as a Kubernetes scheduler beside kube-scheduler: it places the\n" +
			"pods whose spec.schedulerName is --scheduler-name, job by job (pods of one\n" +
			"batch/v1 Job, or bare pods with one gpusched.io/job label), gangs all or nothing,\n" +
			"with the same policies and placers as sim and server, on the nodes' nvidia.com/gpu.\n" +
			"It binds pods through the Binding subresource, deletes the pods of preempted jobs\n" +
			"with their grace period, and says why a pod waits in its PodScheduled condition\n" +
			"and in Events. docs/KUBERNETES.md has the details.",
		Example: "  gpusched kube --kubeconfig out/testbed/kubeconfig\n" +
			"  gpusched kube --policy tiresias --placer hetero --leader-elect --namespace gpusched",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runKube(cmd.Context(), o, cmd.ErrOrStderr())
		},
	}
	def := recipe.Defaults()
	f := cmd.Flags()
	o.given = func(name string) bool { return f.Changed(name) }
	f.StringVar(&o.client.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: the in-cluster service account in a pod, else $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&o.schedulerName, "scheduler-name", kube.DefaultSchedulerName, "schedule the pods whose spec.schedulerName is this")
	f.StringVar(&o.config, "config", "", "scheduler configuration file (YAML, docs/CONFIG.md): policy, placer and their settings; flags win")
	f.StringVar(&o.names.Policy, "policy", def.Policy, "queue policy: "+strings.Join(servicePolicies(), ", ")+"; "+recipe.RecommendedNote)
	f.StringVar(&o.names.Placer, "placer", def.Placer, "placer: pack, spread, hetero, fit (multi-resource best fit, docs/RESOURCES.md)")
	f.StringVar(&o.names.Scaler, "scaler", def.Scaler, "elastic scaler: none, threshold (seed 000), fulfillment (seed 001): resizes elastic Volcano Jobs and batch Jobs")
	f.StringVar(&o.metricsAddr, "metrics-addr", "127.0.0.1:8080", "serve /metrics and /healthz on this address (\"\" for none); beyond loopback, /metrics wants a Kubernetes bearer token allowed to get /metrics")
	f.BoolVar(&o.insecure, "insecure", false, "serve /metrics beyond loopback without authentication")
	f.BoolVar(&o.leaderElect, "leader-elect", false, "run leader election on a coordination.k8s.io Lease; only the leader schedules")
	f.StringVar(&o.namespace, "namespace", "", "namespace of the leader lease (default: $POD_NAMESPACE, the pod's own namespace, else default)")
	f.StringVar(&o.leaseName, "lease-name", kube.DefaultLeaseName, "name of the leader lease")
	f.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", kube.DefaultLeaseDuration, "how long a standby waits after the leader's last renewal before taking over")
	f.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", kube.DefaultRenewDeadline, "how long the leader tries to renew before it gives up leading")
	f.DurationVar(&o.retryPeriod, "leader-elect-retry-period", kube.DefaultRetryPeriod, "how often candidates try to acquire or renew the lease")
	f.StringVar(&o.nodeSelector, "node-selector", "", "use only the nodes with these labels (a label selector, e.g. pool=training)")
	f.Float32Var(&o.client.QPS, "kube-api-qps", 5000, "requests per second to the API server (client-side limit; a bound pod costs a Binding and an Event)")
	f.IntVar(&o.client.Burst, "kube-api-burst", 10000, "burst of requests to the API server above --kube-api-qps")
	f.IntVar(&o.bindWorkers, "bind-workers", kube.DefaultBindWorkers, "jobs bound at once")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log debug messages")
	f.StringVar(&o.cpuProfile, "cpu-profile", "", "write a CPU profile (go tool pprof) of the whole run into this file")
	return cmd
}

// kubeConfig turns the flags (and the --config file) into the scheduler's
// configuration.
func (o *kubeOptions) kubeConfig(logger *slog.Logger, reg prometheus.Registerer) (kube.Config, error) {
	names, opts := o.names, recipe.DefaultOptions()
	if o.config != "" {
		if _, err := applySchedFile(o.config, &names, &opts, o.given); err != nil {
			return kube.Config{}, err
		}
	}
	cfg := kube.Config{SchedulerName: o.schedulerName, Names: names, Options: &opts, LeaderElect: o.leaderElect,
		LeaseNamespace: o.namespace, LeaseName: o.leaseName, LeaseDuration: o.leaseDuration,
		RenewDeadline: o.renewDeadline, RetryPeriod: o.retryPeriod, BindWorkers: o.bindWorkers,
		Logger: logger, Registerer: reg}
	if o.nodeSelector != "" {
		sel, err := labels.Parse(o.nodeSelector)
		if err != nil {
			return kube.Config{}, badInput("--node-selector %q: %w", o.nodeSelector, err)
		}
		cfg.NodeSelector = sel
	}
	if o.schedulerName == "" || strings.ContainsAny(o.schedulerName, ",=! ") {
		return kube.Config{}, badInput("--scheduler-name %q: want a scheduler name (no spaces, commas, = or !)", o.schedulerName)
	}
	return cfg, nil
}

// runKube runs `gpusched kube` until SIGINT or SIGTERM.
func runKube(ctx context.Context, o *kubeOptions, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	reg := prometheus.NewRegistry()
	cfg, err := o.kubeConfig(logger, reg)
	if err != nil {
		return err
	}
	if err := cfg.Check(); err != nil {
		return usageError{err}
	}
	o.client.UserAgent = "gpusched/" + o.schedulerName
	rc, from, err := kube.RESTConfig(o.client)
	if err != nil {
		return usageError{err}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := kube.Connect(ctx, rc, from, connectTimeout)
	if errors.Is(err, kube.ErrConfig) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if cfg.Dynamic, err = kube.Dynamic(rc); err != nil {
		return usageError{err}
	}
	s, err := kube.New(client, cfg)
	if errors.Is(err, kube.ErrConfig) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	logger.Info("connected", "server", rc.Host, "from", from, "scheduler", o.schedulerName, "identity", s.Identity())
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if o.metricsAddr != "" {
		ln, err := net.Listen("tcp", o.metricsAddr)
		if err != nil {
			return badInput("--metrics-addr %s: %w", o.metricsAddr, err)
		}
		var auth *kube.Authenticator
		if !loopback(o.metricsAddr) && !o.insecure {
			auth = kube.NewAuthenticator(client, logger)
		}
		logger.Info("serving metrics", "addr", ln.Addr().String(), "authentication", auth != nil)
		hs := metricsServer(reg, auth, logger)
		go func() { _ = hs.Serve(ln) }()
		defer hs.Close()
	}
	return s.Run(ctx)
}

// metricsServer serves /metrics (the registry's; behind auth unless it is
// nil) and /healthz (open: it says only "ok", for the kubelet's probes).
func metricsServer(reg *prometheus.Registry, auth *kube.Authenticator, logger *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	var metrics http.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if auth != nil {
		metrics = auth.Wrap(metrics)
	}
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
}

// startCPUProfile profiles the process into path until the returned
// function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, badInput("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpu-profile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
