package client

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gpusched/gpusched/service/api"
)

// DefaultServer is the server URL used when neither --server nor
// $GPUSCHED_SERVER gives one (the default listen address of `gpusched
// server` and `gpusched dev`).
const DefaultServer = "http://127.0.0.1:7070"

// EnvServer is the environment variable that names the server.
const EnvServer = "GPUSCHED_SERVER"

// maxAnswerBytes bounds a JSON answer the client reads (a job list of a
// large cluster stays far below it); maxErrorBytes bounds an error answer.
const (
	maxAnswerBytes = 256 << 20
	maxErrorBytes  = 64 << 10
)

// ServerURL resolves the server's URL: flag when not empty, else the value
// of $GPUSCHED_SERVER as getenv returns it (pass os.Getenv), else
// DefaultServer. getenv may be nil.
func ServerURL(flag string, getenv func(string) string) string {
	if s := strings.TrimSpace(flag); s != "" {
		return s
	}
	if getenv != nil {
		if s := strings.TrimSpace(getenv(EnvServer)); s != "" {
			return s
		}
	}
	return DefaultServer
}

// Client calls one scheduler service.
type Client struct {
	base string // scheme://host[/prefix], no trailing slash
	hc   *http.Client
	// where names the server(s) in errors: base, or the whole list.
	where string
}

// New returns a client of the server at baseURL, an http or https URL such
// as "http://127.0.0.1:7070" (a path prefix is kept, for a server behind a
// reverse proxy). hc nil means a plain http.Client without a global
// timeout: bound each call with its context (logs may stream for hours).
func New(baseURL string, hc *http.Client) (*Client, error) {
	base, err := parseBase(baseURL)
	if err != nil {
		return nil, err
	}
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{base: base, hc: hc, where: base}, nil
}

// NewList returns a client of a comma-separated list of servers (one URL,
// or several servers sharing an etcd store): its requests go through a
// Failover over base (nil: http.DefaultTransport), which follows the
// leader's redirects and fails over to the next server on its own. A
// single URL works as with New, redirects included.
func NewList(list string, base http.RoundTripper) (*Client, error) {
	servers, err := ParseServers(list)
	if err != nil {
		return nil, err
	}
	f, err := NewFailover(servers, base)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: f, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // Failover follows the servers' redirects
	}}
	c, err := New(servers[0], hc)
	if err != nil {
		return nil, err
	}
	c.where = strings.Join(servers, ",")
	return c, nil
}

// parseBase checks a server URL and returns it without a trailing slash.
func parseBase(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("server URL is empty: want e.g. %s", DefaultServer)
	}
	if !strings.Contains(s, "://") {
		return "", fmt.Errorf("server URL %q: no scheme, want http://%s", raw, s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("server URL %q: %w (want e.g. %s)", raw, err, DefaultServer)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		_, rest, _ := strings.Cut(s, "://")
		return "", fmt.Errorf("server URL %q: scheme must be http or https, e.g. http://%s", raw, rest)
	case u.Host == "":
		return "", fmt.Errorf("server URL %q: no host, want e.g. %s", raw, DefaultServer)
	case u.User != nil:
		return "", fmt.Errorf("server URL %q: user information is not supported", raw)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", fmt.Errorf("server URL %q: must not have a query or fragment", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// URL returns the server's base URL.
func (c *Client) URL() string { return c.base }

// Submit submits a job and returns it as the server stored it (state
// queued, with its new ID).
func (c *Client) Submit(ctx context.Context, spec api.JobSpec) (api.Job, error) {
	body, err := json.Marshal(spec)
	if err != nil {
		return api.Job{}, fmt.Errorf("encode job spec: %w", err)
	}
	var j api.Job
	err = c.call(ctx, http.MethodPost, "/v1/jobs", body, http.StatusCreated, &j)
	return j, err
}

// Jobs lists the jobs, all of them when state is empty, else those in that
// state. The answer is never nil.
func (c *Client) Jobs(ctx context.Context, state api.State) ([]api.Job, error) {
	path := "/v1/jobs"
	if state != "" {
		path += "?state=" + url.QueryEscape(string(state))
	}
	var l api.JobList
	if err := c.call(ctx, http.MethodGet, path, nil, http.StatusOK, &l); err != nil {
		return nil, err
	}
	if l.Jobs == nil {
		l.Jobs = []api.Job{}
	}
	return l.Jobs, nil
}

// Job returns one job with its events.
func (c *Client) Job(ctx context.Context, id string) (api.Job, error) {
	var j api.Job
	p, err := jobPath(id, "")
	if err == nil {
		err = c.call(ctx, http.MethodGet, p, nil, http.StatusOK, &j)
	}
	return j, err
}

// Cancel cancels a job and returns it in its new state. Cancelling a job
// that has already ended is an *Error with status 409.
func (c *Client) Cancel(ctx context.Context, id string) (api.Job, error) {
	var j api.Job
	p, err := jobPath(id, "/cancel")
	if err == nil {
		err = c.call(ctx, http.MethodPost, p, nil, http.StatusOK, &j)
	}
	return j, err
}

// Logs returns a job's output. With follow, the stream stays open and
// delivers new output until the job ends (the server then closes it) or ctx
// is done. The caller closes the reader.
func (c *Client) Logs(ctx context.Context, id string, follow bool) (io.ReadCloser, error) {
	p, err := jobPath(id, "/logs")
	if err != nil {
		return nil, err
	}
	if follow {
		p += "?follow=true"
	}
	resp, err := c.do(ctx, http.MethodGet, p, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, answerError(resp)
	}
	return resp.Body, nil
}

// Hostfile returns a running job's current hosts as Horovod's host list:
// one "host:slots" line per node, in node-rank order (GET
// /v1/jobs/{id}/hostfile). A job that is not running is an *Error with
// status 409, an unknown one a 404.
func (c *Client) Hostfile(ctx context.Context, id string) (string, error) {
	p, err := jobPath(id, "/hostfile")
	if err != nil {
		return "", err
	}
	resp, err := c.do(ctx, http.MethodGet, p, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", answerError(resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", p, err)
	}
	return string(data), nil
}

// Nodes lists the nodes. The answer is never nil.
func (c *Client) Nodes(ctx context.Context) ([]api.Node, error) {
	var l api.NodeList
	if err := c.call(ctx, http.MethodGet, "/v1/nodes", nil, http.StatusOK, &l); err != nil {
		return nil, err
	}
	if l.Nodes == nil {
		l.Nodes = []api.Node{}
	}
	return l.Nodes, nil
}

// Health checks that the server answers GET /healthz with 200.
func (c *Client) Health(ctx context.Context) error {
	resp, err := c.do(ctx, http.MethodGet, "/healthz", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return answerError(resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBytes))
	return nil
}

// jobPath returns /v1/jobs/{id}{suffix} with id escaped.
func jobPath(id, suffix string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", errors.New("job ID is empty")
	}
	return "/v1/jobs/" + url.PathEscape(id) + suffix, nil
}

// call sends a request and decodes a JSON answer with status want into out.
func (c *Client) call(ctx context.Context, method, path string, body []byte, want int, out any) error {
	resp, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		if resp.StatusCode < 300 {
			return fmt.Errorf("%s %s: unexpected answer %s", method, path, resp.Status)
		}
		return answerError(resp)
	}
	d := json.NewDecoder(io.LimitReader(resp.Body, maxAnswerBytes))
	if err := d.Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// do sends one request; a transport failure before any answer becomes an
// *UnreachableError.
func (c *Client) do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() == nil && unreachable(err) {
			return nil, &UnreachableError{URL: c.where, Err: err}
		}
		if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
			return nil, fmt.Errorf("%s %s%s: %w (give the server's CA certificate with --ca or $%s, e.g. its DATA/tls/ca.crt)",
				method, c.base, path, err, EnvCA)
		}
		return nil, fmt.Errorf("%s %s%s: %w", method, c.base, path, err)
	}
	return resp, nil
}

// answerError reads an error answer into an *Error.
func answerError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	e := &Error{Status: resp.StatusCode}
	if json.Unmarshal(data, &e.Body) == nil && e.Body.Error != "" {
		return e
	}
	e.Body = api.Error{Error: firstLine(data)}
	if e.Body.Error == "" {
		e.Body.Error = http.StatusText(resp.StatusCode)
	}
	return e
}

// firstLine returns the first line of a non-JSON answer, shortened.
func firstLine(data []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
