package cli

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpusched/gpusched/service/agent"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/client"
	"github.com/gpusched/gpusched/service/server"
)

// secureAgent fits one of dev's agents to the server at url: with TLS,
// a client that trusts the self-signed CA; with authentication, the
// node's credential, minted by dev itself (it owns the server) and kept in
// the agent's data directory as node.token.
func (o *devOptions) secureAgent(srv *server.Server, url string, cfg *agent.Config) error {
	if strings.HasPrefix(url, "https://") {
		ca := ""
		if o.server.sec.selfSigned {
			ca = filepath.Join(o.server.data, "tls", "ca.crt")
		}
		hc, err := client.Options{CAFile: ca}.HTTPClient()
		if err != nil {
			return err
		}
		cfg.Client, cfg.CAFile = hc, ca
	}
	if srv.Tokens() == nil {
		return nil
	}
	name := cfg.Name
	if name == "" {
		var err error
		if name, err = os.Hostname(); err != nil {
			return err
		}
	}
	cred, err := devCredential(srv, name, filepath.Join(cfg.DataDir, "node.token"))
	if err != nil {
		return err
	}
	cfg.Credential = cred
	return nil
}

// devCredential returns the credential of dev's node: the one its agent
// kept when the server still knows it, else a new one (the old one, if
// any, revoked: dev owns its server), written where the agent keeps it.
func devCredential(srv *server.Server, node, path string) (string, error) {
	ctx := context.Background()
	ts := srv.Tokens()
	if data, err := os.ReadFile(path); err == nil {
		cred := strings.TrimSpace(string(data))
		if id, err := ts.Verify(ctx, cred); err == nil && id.Node == node {
			return cred, nil
		}
	}
	list, err := ts.List(ctx)
	if err != nil {
		return "", err
	}
	for _, t := range list {
		if t.Kind == api.KindNode && t.Node == node {
			if _, err := ts.Revoke(ctx, t.ID); err != nil {
				return "", err
			}
		}
	}
	cred, err := ts.CreateNode(ctx, node, "gpusched dev")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(cred+"\n"), 0o600); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return cred, nil
}

// localURL turns a listen URL on an unspecified address (0.0.0.0, ::)
// into one on loopback, which dev's own agent reaches and a self-signed
// certificate covers.
func localURL(raw string) string { return withHost(raw, "127.0.0.1") }

// publicURL turns a listen URL on an unspecified address into one on the
// machine's host name, for other machines (the banner).
func publicURL(raw string) string {
	h, err := os.Hostname()
	if err != nil {
		return raw
	}
	return withHost(raw, h)
}

// withHost replaces an unspecified host of a URL with host.
func withHost(raw, host string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	h, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return raw
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
		u.Host = net.JoinHostPort(host, port)
	}
	return u.String()
}
