package cli

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/auth"
	"github.com/gpusched/gpusched/service/server"
)

// securityOptions are the flags of `server` and `dev` about authentication
// and TLS (docs/SECURITY.md).
type securityOptions struct {
	auth        bool
	tlsCert     string
	tlsKey      string
	selfSigned  bool
	sans        string
	insecure    bool
	bodyTimeout time.Duration
	// auditRetention is --audit-retention (0: keep every entry).
	auditRetention time.Duration
}

// addSecurityFlags defines the flags; authDefault is --auth's default
// (server: on; dev: on only when it listens beyond loopback).
func (o *serverOptions) addSecurityFlags(cmd *cobra.Command, authDefault bool) {
	f := cmd.Flags()
	f.BoolVar(&o.sec.auth, "auth", authDefault, "require a bearer token on every request (the bootstrap admin token is written to DATA/admin.token)")
	f.StringVar(&o.sec.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	f.StringVar(&o.sec.tlsKey, "tls-key", "", "the private key of --tls-cert (PEM)")
	f.BoolVar(&o.sec.selfSigned, "tls-self-signed", false, "serve HTTPS with a certificate of a CA made in DATA/tls (prints the CA's fingerprint; agents and clients take --ca DATA/tls/ca.crt)")
	f.StringVar(&o.sec.sans, "tls-san", "", "with --tls-self-signed: more host names or addresses for the certificate, comma-separated")
	f.BoolVar(&o.sec.insecure, "insecure", false, "allow listening beyond loopback without TLS or without authentication")
	f.DurationVar(&o.sec.bodyTimeout, "body-timeout", server.DefaultBodyTimeout, "answer 408 to a request whose body takes longer than this to arrive")
	f.DurationVar(&o.sec.auditRetention, "audit-retention", 0, "delete audit log entries older than this, e.g. 2160h for 90 days (checked at start, then every tenth of it, at most hourly; 0: keep every entry)")
}

// loopback reports whether the listen address is on loopback only.
func loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authOn reports whether the server requires authentication: --auth, and
// for dev (devAuto) always when it listens beyond loopback unless --auth
// was given.
func (o *serverOptions) authOn(devAuto bool) bool {
	if devAuto && !o.given("auth") {
		return !loopback(o.listen)
	}
	return o.sec.auth
}

// checkSecurity refuses what would expose the cluster: listening beyond
// loopback without TLS, or without authentication, unless --insecure. It
// also checks the TLS flags. Errors are bad input (exit 2).
func (o *serverOptions) checkSecurity(authOn bool) error {
	s := &o.sec
	switch {
	case (s.tlsCert == "") != (s.tlsKey == ""):
		return badInput("--tls-cert and --tls-key go together")
	case s.selfSigned && s.tlsCert != "":
		return badInput("give either --tls-cert/--tls-key or --tls-self-signed, not both")
	case s.sans != "" && !s.selfSigned:
		return badInput("--tls-san needs --tls-self-signed")
	case s.bodyTimeout <= 0:
		return badInput("--body-timeout %s: must be positive", s.bodyTimeout)
	case s.auditRetention < 0:
		return badInput("--audit-retention %s: must be positive, or 0 to keep every entry", s.auditRetention)
	}
	tlsOn := s.selfSigned || s.tlsCert != ""
	if loopback(o.listen) || s.insecure {
		return nil
	}
	if !tlsOn {
		return badInput("--listen %s is not a loopback address, and without TLS the server would send tokens and jobs in the clear: "+
			"give --tls-cert FILE --tls-key FILE or --tls-self-signed, listen on 127.0.0.1, or add --insecure to serve plain HTTP anyway", o.listen)
	}
	if !authOn {
		return badInput("--listen %s is not a loopback address, and without authentication anyone who reaches it could run any command "+
			"on every GPU node: drop --auth=false, or add --insecure", o.listen)
	}
	return nil
}

// tlsConfig returns the server's TLS configuration (nil without TLS); with
// --tls-self-signed it makes or loads the CA in dir/tls and tells stderr
// where its certificate is and its fingerprint.
func (o *serverOptions) tlsConfig(dir string, stderr io.Writer) (*tls.Config, string, error) {
	s := &o.sec
	switch {
	case s.tlsCert != "":
		cert, err := tls.LoadX509KeyPair(s.tlsCert, s.tlsKey)
		if err != nil {
			return nil, "", badInput("--tls-cert/--tls-key: %w", err)
		}
		return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, "", nil
	case s.selfSigned:
		hosts := o.tlsHosts()
		ss, err := auth.LoadSelfSigned(filepath.Join(dir, "tls"), hosts, time.Now())
		if err != nil {
			return nil, "", err
		}
		fmt.Fprintf(stderr, "gpusched: TLS with the self-signed CA %s, fingerprint %s: give that file to agents and clients (--ca)\n",
			ss.CAPath, ss.Fingerprint)
		return &tls.Config{Certificates: []tls.Certificate{ss.Cert}, MinVersion: tls.VersionTLS12}, ss.CAPath, nil
	}
	return nil, "", nil
}

// tlsHosts are the names a self-signed certificate covers: the listen host
// (unless unspecified), the host name and --tls-san.
func (o *serverOptions) tlsHosts() []string {
	var hosts []string
	if h, _, err := net.SplitHostPort(o.listen); err == nil && h != "" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsUnspecified() {
			hosts = append(hosts, h)
		}
	}
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	for _, s := range strings.Split(o.sec.sans, ",") {
		if s = strings.TrimSpace(s); s != "" {
			hosts = append(hosts, s)
		}
	}
	return hosts
}

// scheme is "https" with TLS, else "http".
func scheme(tc *tls.Config) string {
	if tc != nil {
		return "https"
	}
	return "http"
}
