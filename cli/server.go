package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/recipe"
	"github.com/gpusched/gpusched/service/server"
	"github.com/gpusched/gpusched/service/settings"
)

// defaultListen is the default --listen of server and dev (DESIGN.md).
const defaultListen = "127.0.0.1:7070"

// shutdownTimeout bounds the graceful shutdown of the HTTP server.
const shutdownTimeout = 10 * time.Second

// serverOptions are the flags of `gpusched server`, shared with `gpusched
// dev`: addFlags defines them, openServer builds the server from them and
// serve runs it.
type serverOptions struct {
	listen, data, store, config string
	names                       recipe.Names
	heartbeatTimeout            time.Duration
	jobRetention                time.Duration
	masterPorts                 string // BASE-LAST: the MASTER_PORTs jobs get
	verbose                     bool
	etcd                        etcdOptions
	// sec holds authentication and TLS (serversec.go); dev sets devAuth:
	// authentication follows the listen address unless --auth is given.
	sec     securityOptions
	devAuth bool
	// live are seed 002's live flags (serverlive.go).
	live liveOptions
	// given reports whether a flag was set on the command line.
	given func(flag string) bool
}

func newServerCommand() *cobra.Command {
	o := &serverOptions{}
	cmd := &cobra.Command{
		Use:   "server [--listen ADDR] [--data DIR] [--store bolt | etcd://HOST:PORT,...] [--policy P --placer P --scaler S | --config FILE]",
		Short: "Run the scheduler service: REST API, durable job store and scheduling loop",
		Long: "server runs the scheduler service: the REST API under /v1 (jobs, nodes, logs),\n" +
			"the protocol its node agents speak, the durable job store (bbolt in DIR/store.db)\n" +
			"and the scheduling loop, which runs the same engine as `gpusched sim` on the real\n" +
			"clock. Replica output is kept in DIR/logs. A server restarted on the same --data\n" +
			"reloads every job. On SIGINT or SIGTERM it shuts down gracefully; jobs keep\n" +
			"running on their nodes. docs/SERVER.md has the details.",
		Example: "  gpusched server\n" +
			"  gpusched server --listen :7070 --data /var/lib/gpusched --policy hlas --placer hetero\n" +
			"  gpusched server --config sched.yaml --heartbeat-timeout 30s",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServer(cmd.Context(), o, cmd.ErrOrStderr())
		},
	}
	o.addFlags(cmd)
	o.addSecurityFlags(cmd, true)
	return cmd
}

// addFlags defines the server's flags on cmd.
func (o *serverOptions) addFlags(cmd *cobra.Command) {
	def := recipe.Defaults()
	f := cmd.Flags()
	o.given = func(name string) bool { return f.Changed(name) }
	f.StringVar(&o.listen, "listen", defaultListen, "address to serve the API on (host:port)")
	f.StringVar(&o.data, "data", "", "data directory: the store (store.db) and replica logs (default: <user cache dir>/gpusched/server)")
	f.StringVar(&o.store, "store", "bolt", "job store: bolt (the embedded store in --data), or etcd://HOST:PORT[,HOST:PORT...] (several servers may share it; one leads)")
	f.StringVar(&o.config, "config", "", "scheduler configuration file (YAML, docs/CONFIG.md): policy, placer, scaler and their settings; flags win")
	f.StringVar(&o.names.Policy, "policy", def.Policy, "queue policy: "+strings.Join(servicePolicies(), ", ")+"; "+recipe.RecommendedNote)
	f.StringVar(&o.names.Placer, "placer", def.Placer, "placer: "+strings.Join(recipe.Placers(), ", "))
	f.StringVar(&o.names.Scaler, "scaler", def.Scaler, "elastic scaler: "+strings.Join(recipe.Scalers(), ", "))
	f.DurationVar(&o.heartbeatTimeout, "heartbeat-timeout", settings.DefaultHeartbeatTimeout,
		"mark a node down when its agent has not reported for this long: its replicas are lost, elastic jobs at or above min continue smaller, other jobs are re-queued")
	f.StringVar(&o.masterPorts, "master-ports", fmt.Sprintf("%d-%d", settings.DefaultPortBase, settings.DefaultPortBase+settings.DefaultPortRange-1),
		"the ports a job attempt's MASTER_PORT is chosen from (FIRST-LAST, on its node rank 0): open them between the nodes; two servers whose agents share hosts need ranges of their own")
	f.DurationVar(&o.jobRetention, "job-retention", 0,
		"delete ended jobs (record, logs, EDL state) this long after they ended, e.g. 720h for 30 days (checked at start, then every tenth of it, at most hourly; 0: keep every job)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log debug messages")
	o.etcd.addFlags(cmd)
	addLiveFlags(cmd, &o.live)
}

// parsePortRange reads --master-ports: FIRST-LAST, both within 1..65535.
func parsePortRange(s string) (base, n int, err error) {
	first, last, ok := strings.Cut(s, "-")
	a, errA := strconv.Atoi(strings.TrimSpace(first))
	b, errB := strconv.Atoi(strings.TrimSpace(last))
	if !ok || errA != nil || errB != nil || a < 1 || b > 65535 || b < a {
		return 0, 0, badInput("--master-ports %q: want FIRST-LAST with 1 ≤ FIRST ≤ LAST ≤ 65535, e.g. 29500-30499", s)
	}
	return a, b - a + 1, nil
}

// servicePolicies are the policies the service accepts (srtf needs job
// durations).
func servicePolicies() []string {
	var out []string
	for _, p := range recipe.Policies() {
		if p != "srtf" {
			out = append(out, p)
		}
	}
	return out
}

// logger returns the slog logger of the options.
func (o *serverOptions) logger(stderr io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// serverConfig turns the flags (and the --config file) into a server
// configuration; the store is left to server.New (bbolt in the data
// directory).
func (o *serverOptions) serverConfig(logger *slog.Logger) (server.Config, error) {
	if o.store != "bolt" && !strings.HasPrefix(o.store, "etcd://") {
		return server.Config{}, badInput("--store %q: want bolt or etcd://HOST:PORT[,HOST:PORT...]", o.store)
	}
	if o.heartbeatTimeout <= 0 {
		return server.Config{}, badInput("--heartbeat-timeout %s: must be positive", o.heartbeatTimeout)
	}
	if o.jobRetention < 0 {
		return server.Config{}, badInput("--job-retention %s: must be positive, or 0 to keep every job", o.jobRetention)
	}
	portBase, portRange, err := parsePortRange(o.masterPorts)
	if err != nil {
		return server.Config{}, err
	}
	names, opts := o.names, recipe.DefaultOptions()
	var queues *config.QueuesSpec
	var sched *config.SchedFile
	if err := o.checkSecurity(o.authOn(o.devAuth)); err != nil {
		return server.Config{}, err
	}
	if o.config != "" {
		f, err := applySchedFile(o.config, &names, &opts, o.given)
		if err != nil {
			return server.Config{}, err
		}
		if f.QueuesSpec.Declared() {
			queues = &f.QueuesSpec
		}
		sched = f
	}
	live, sampleEvery, err := o.live.liveConfig(sched, o.given)
	if err != nil {
		return server.Config{}, err
	}
	dir, err := o.dataDir()
	if err != nil {
		return server.Config{}, err
	}
	cfg := server.Config{Config: settings.Config{DataDir: dir, Names: names, Options: &opts, Queues: queues,
		HeartbeatTimeout: o.heartbeatTimeout, Logger: logger, Live: live, PowerSampleEvery: sampleEvery,
		PortBase: portBase, PortRange: portRange},
		BodyTimeout: o.sec.bodyTimeout, AuditRetention: o.sec.auditRetention, JobRetention: o.jobRetention}
	if o.authOn(o.devAuth) {
		cfg.Auth = &server.AuthConfig{AdminTokenFile: filepath.Join(dir, "admin.token")}
	}
	if d := settings.DefaultHeartbeatInterval; o.heartbeatTimeout <= d {
		cfg.HeartbeatInterval = o.heartbeatTimeout / 3
	}
	return cfg, nil
}

// dataDir returns --data or its default.
func (o *serverOptions) dataDir() (string, error) {
	if o.data != "" {
		return o.data, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", badInput("--data: no default data directory (%v); give one", err)
	}
	return filepath.Join(cache, "gpusched", "server"), nil
}

// openServer builds the server from the flags: it opens (or creates) the
// store in the data directory and loads its jobs. Bad flags and a refused
// configuration (srtf, unknown names) are usage errors.
func (o *serverOptions) openServer(logger *slog.Logger) (*server.Server, error) {
	cfg, err := o.serverConfig(logger)
	if err != nil {
		return nil, err
	}
	srv, err := server.New(cfg)
	if errors.Is(err, settings.ErrConfig) {
		return nil, usageError{err}
	}
	if err != nil {
		return nil, err
	}
	return srv, nil
}

// runServer runs `gpusched server` until SIGINT or SIGTERM.
func runServer(ctx context.Context, o *serverOptions, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	logger := o.logger(stderr)
	var (
		srv service
		err error
	)
	if strings.HasPrefix(o.store, "etcd://") {
		srv, err = o.openHA(logger)
	} else {
		srv, err = o.openServer(logger)
	}
	if err != nil {
		return err
	}
	ln, _, err := o.listenSecure(srv.WroteAdminToken(), stderr)
	if err != nil {
		_ = srv.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, srv, ln, logger)
}

// listenSecure listens on --listen, with TLS when asked, tells stderr
// where the bootstrap admin token was written, and returns the listener
// and the server's base URL.
func (o *serverOptions) listenSecure(wroteToken bool, stderr io.Writer) (net.Listener, string, error) {
	dir, err := o.dataDir()
	if err != nil {
		return nil, "", err
	}
	tc, _, err := o.tlsConfig(dir, stderr)
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return nil, "", fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	if wroteToken {
		fmt.Fprintf(stderr, "gpusched: wrote the bootstrap admin token to %s (mode 0600): gpusched login --token \"$(cat %s)\"\n",
			filepath.Join(dir, "admin.token"), filepath.Join(dir, "admin.token"))
	}
	return ln, scheme(tc) + "://" + ln.Addr().String(), nil
}

// serve serves srv's API on ln and runs its scheduling loop until ctx
// ends, then shuts down gracefully: the loop stops (waking long-polls and
// log followers), the HTTP server finishes its requests, and the server
// and its store are closed. serve closes ln.
func serve(ctx context.Context, srv service, ln net.Listener, logger *slog.Logger) error {
	hs := server.NewHTTPServer(srv.Handler(), slog.NewLogLogger(logger.Handler(), slog.LevelWarn), server.Limits{})
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(runCtx) }()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	logger.Info("serving", "addr", ln.Addr().String())
	var err error
	select {
	case <-ctx.Done():
		logger.Info("shutting down")
	case err = <-served:
		err = fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	stopRun()
	err = errors.Join(err, <-ran)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("shut down the HTTP server: %w", serr))
	}
	return errors.Join(err, srv.Close())
}
