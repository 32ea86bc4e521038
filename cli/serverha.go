package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/gpusched/gpusched/service/leader"
	"github.com/gpusched/gpusched/service/server"
	"github.com/gpusched/gpusched/service/store"
)

// service is what serve runs: one server (server.Server) or one of
// several sharing an etcd store (haService).
type service interface {
	Handler() http.Handler
	Run(ctx context.Context) error
	Close() error
	// WroteAdminToken says that the server wrote the bootstrap admin
	// token (the first start of a single server, or of a cluster).
	WroteAdminToken() bool
}

// WroteAdminToken implements service.
func (h *haService) WroteAdminToken() bool { return h.HA.AdminTokenWritten }

// etcdOptions are the flags of `gpusched server --store etcd://...`.
type etcdOptions struct {
	prefix, cacert, cert, key, advertise string
	dialTimeout, leaderTTL               time.Duration
}

// addFlags defines the etcd flags on cmd.
func (o *etcdOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.prefix, "etcd-prefix", store.DefaultEtcdPrefix, "etcd key prefix of the store (with --store etcd://...); servers sharing it elect one leader")
	f.StringVar(&o.cacert, "etcd-cacert", "", "CA certificate (PEM) that signed the etcd members' certificates: connect with TLS")
	f.StringVar(&o.cert, "etcd-cert", "", "client certificate (PEM) for etcd's client-certificate authentication (with --etcd-key)")
	f.StringVar(&o.key, "etcd-key", "", "key (PEM) of --etcd-cert")
	f.StringVar(&o.advertise, "advertise", "", "URL other servers redirect clients to when this one leads (default: http://--listen, the host name when it listens on all addresses)")
	f.DurationVar(&o.dialTimeout, "etcd-timeout", store.DefaultEtcdDialTimeout, "how long to wait for the etcd cluster at start before giving up (exit 2)")
	f.DurationVar(&o.leaderTTL, "leader-ttl", leader.DefaultTTL, "lease of the leader's etcd session (whole seconds): a leader that dies is replaced after at most this long")
}

// tlsConfig returns the TLS configuration of the etcd flags, nil without
// them.
func (o *etcdOptions) tlsConfig() (*tls.Config, error) {
	if o.cacert == "" && o.cert == "" && o.key == "" {
		return nil, nil
	}
	if (o.cert == "") != (o.key == "") {
		return nil, badInput("--etcd-cert and --etcd-key go together")
	}
	for flag, path := range map[string]string{"--etcd-cacert": o.cacert, "--etcd-cert": o.cert, "--etcd-key": o.key} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			return nil, badInput("%s: %w", flag, err)
		}
	}
	info := transport.TLSInfo{TrustedCAFile: o.cacert, CertFile: o.cert, KeyFile: o.key}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, badInput("etcd TLS: %w", err)
	}
	return cfg, nil
}

// advertiseURL returns --advertise or the URL made from --listen.
func (o *etcdOptions) advertiseURL(listen string) (string, error) {
	if o.advertise != "" {
		if !strings.HasPrefix(o.advertise, "http://") && !strings.HasPrefix(o.advertise, "https://") {
			return "", badInput("--advertise %q: want http://HOST:PORT", o.advertise)
		}
		return strings.TrimRight(o.advertise, "/"), nil
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", badInput("--listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		if host, err = os.Hostname(); err != nil {
			return "", badInput("--advertise: no host name (%v); give one", err)
		}
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// openHA opens the etcd store (waiting at most --etcd-timeout) and builds
// one of several servers on it. A bad URL or prefix, an unreachable
// cluster and bad TLS files are usage errors (exit 2).
func (o *serverOptions) openHA(logger *slog.Logger) (service, error) {
	cfg, err := o.serverConfig(logger)
	if err != nil {
		return nil, err
	}
	eps, err := store.ParseEtcdURL(o.store)
	if err != nil {
		return nil, badInput("--store: %w", err)
	}
	tc, err := o.etcd.tlsConfig()
	if err != nil {
		return nil, err
	}
	if tc != nil {
		for i := range eps {
			eps[i] = "https://" + strings.TrimPrefix(eps[i], "http://")
		}
	}
	self, err := o.etcd.advertiseURL(o.listen)
	if err != nil {
		return nil, err
	}
	if err := cfg.Check(); err != nil {
		return nil, usageError{err} // refuse a bad policy before contacting etcd
	}
	st, err := store.OpenEtcd(store.EtcdOptions{Endpoints: eps, Prefix: o.etcd.prefix, TLS: tc,
		DialTimeout: o.etcd.dialTimeout, Logger: logger})
	if err != nil {
		return nil, badInput("--store %s: %w", o.store, err)
	}
	el, err := leader.New(leader.Config{Store: st, Self: self, TTL: o.etcd.leaderTTL, Logger: logger})
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	logger.Info("one of several servers", "store", o.store, "prefix", o.etcd.prefix, "advertise", self, "leader_ttl_s", el.TTL())
	ha, err := server.NewHA(cfg, st, el)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &haService{HA: ha, st: st}, nil
}

// haService is a server.HA with its store, which Close closes.
type haService struct {
	*server.HA
	st *store.Etcd
}

// Close closes the etcd store (Run has ended: the last term resigned).
func (h *haService) Close() error {
	if err := h.st.Close(); err != nil {
		return fmt.Errorf("close the etcd store: %w", err)
	}
	return nil
}
