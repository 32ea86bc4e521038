package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultPatience is how long a Failover keeps trying while no server
// answers or none leads, before it returns the last answer or error.
const DefaultPatience = 15 * time.Second

// maxHops bounds the redirects one request follows.
const maxHops = 8

// ParseServers splits a comma-separated list of server URLs (--server,
// $GPUSCHED_SERVER) and checks each; the result has no trailing slashes
// and no duplicates.
func ParseServers(list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, raw := range strings.Split(list, ",") {
		if strings.TrimSpace(raw) == "" && strings.Contains(list, ",") {
			return nil, fmt.Errorf("server list %q: empty entry", list)
		}
		base, err := parseBase(raw)
		if err != nil {
			return nil, err
		}
		if !seen[base] {
			seen[base] = true
			out = append(out, base)
		}
	}
	return out, nil
}

// Failover is an http.RoundTripper over a list of servers, several servers
// sharing one etcd store of which one leads (docs/SERVER.md, "Several
// servers"). Requests are built against the first server's URL; Failover
// sends each to the server that answered last (the leader, once known) and:
//
//   - follows 307 and 308 redirects itself (a follower names the leader),
//     remembering where they led;
//   - on a server that cannot be reached (nothing was sent), and for a GET
//     or HEAD also on a connection that breaks before the answer, tries the
//     next server in the list; when none of them answers, it returns the
//     error at once;
//   - on 503 with Retry-After (no leader yet, or one that has just lost its
//     leadership: nothing was done), waits a moment and tries again.
//
// It keeps trying for at most Patience (DefaultPatience when zero), bounded
// by the request's context, then returns the last answer or error. A write
// whose connection broke after it was sent is not repeated: it may have
// been carried out. Failover is safe for concurrent use.
type Failover struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Patience bounds the retries of one request.
	Patience time.Duration

	servers []*url.URL
	mu      sync.Mutex
	cur     *url.URL             // where the last request was answered
	down    map[string]time.Time // host → when it last could not be reached
}

// NewFailover returns a Failover over servers (ParseServers' output);
// base may be nil.
func NewFailover(servers []string, base http.RoundTripper) (*Failover, error) {
	if len(servers) == 0 {
		return nil, errors.New("no server URL")
	}
	f := &Failover{Base: base, down: map[string]time.Time{}}
	for _, s := range servers {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("server URL %q: %w", s, err)
		}
		f.servers = append(f.servers, u)
	}
	f.cur = f.servers[0]
	return f, nil
}

// Servers returns the list's URLs.
func (f *Failover) Servers() []string {
	out := make([]string, len(f.servers))
	for i, u := range f.servers {
		out[i] = u.String()
	}
	return out
}

// Current returns the server the next request goes to first.
func (f *Failover) Current() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur.String()
}

// RoundTrip sends req to the current server, following redirects and
// failing over as described on Failover.
func (f *Failover) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := requestBody(req)
	if err != nil {
		return nil, err
	}
	patience := f.Patience
	if patience <= 0 {
		patience = DefaultPatience
	}
	deadline := time.Now().Add(patience)
	target := f.start()
	tried := 0 // servers tried in a row without an answer
	hops := 0
	for {
		resp, err := f.base().RoundTrip(f.rewrite(req, target, body))
		if err != nil && unreachable(err) {
			f.markDown(target)
		}
		ctxErr := req.Context().Err()
		retry, wait, next := f.judge(req, resp, err, &hops)
		if !retry || ctxErr != nil || time.Now().After(deadline) {
			if err == nil {
				f.answered(target)
			}
			return resp, err
		}
		if resp != nil {
			drain(resp)
		}
		switch {
		case next != nil: // a redirect
			target = next
			tried = 0
			continue
		case err != nil:
			if tried++; tried >= len(f.servers) {
				return nil, err // no server of the list answers
			}
			target = f.after(target)
			continue // try the next server at once
		}
		tried = 0
		if !sleepCtx(req.Context(), wait) {
			return nil, req.Context().Err()
		}
	}
}

// judge decides what to do with one attempt: retry or not, how long to
// wait first, and where a redirect leads.
func (f *Failover) judge(req *http.Request, resp *http.Response, err error, hops *int) (bool, time.Duration, *url.URL) {
	const pause = 150 * time.Millisecond
	if err != nil {
		return unreachable(err) || idempotent(req.Method) && !errors.Is(err, context.Canceled), pause, nil
	}
	switch resp.StatusCode {
	case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		loc, lerr := resp.Location()
		if lerr != nil {
			return false, 0, nil
		}
		if *hops >= maxHops { // the servers disagree on the leader for now: ask again in a moment
			*hops = 0
			return true, pause, nil
		}
		if f.isDown(loc.Host) {
			// The follower names a leader that just failed: its lease has
			// not expired yet. Ask again in a moment.
			*hops = 0
			return true, pause, nil
		}
		*hops++
		return true, 0, &url.URL{Scheme: loc.Scheme, Host: loc.Host, Path: f.baseOf(loc, req)}
	case http.StatusServiceUnavailable:
		if resp.Header.Get("Retry-After") != "" {
			*hops = 0
			return true, pause, nil
		}
	}
	return false, 0, nil
}

// baseOf returns the path prefix of a redirect's server: the Location's
// path less the request's path below the prefix of the first server.
func (f *Failover) baseOf(loc *url.URL, req *http.Request) string {
	rel := strings.TrimPrefix(req.URL.Path, f.servers[0].Path)
	return strings.TrimSuffix(loc.Path, rel)
}

// markDown remembers that u could not be reached.
func (f *Failover) markDown(u *url.URL) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down[u.Host] = time.Now()
}

// isDown reports whether host could not be reached within the last 2 s.
func (f *Failover) isDown(host string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.down[host]
	return ok && time.Since(t) < 2*time.Second
}

// start returns the server to try first.
func (f *Failover) start() *url.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur
}

// answered remembers the server that answered.
func (f *Failover) answered(u *url.URL) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur = u
	delete(f.down, u.Host)
}

// after returns the server after u in the list (the first when u is not
// in it).
func (f *Failover) after(u *url.URL) *url.URL {
	for i, s := range f.servers {
		if s.Scheme == u.Scheme && s.Host == u.Host && s.Path == u.Path {
			return f.servers[(i+1)%len(f.servers)]
		}
	}
	return f.servers[0]
}

// rewrite returns a copy of req aimed at server target: the path below the
// first server's prefix goes below target's.
func (f *Failover) rewrite(req *http.Request, target *url.URL, body []byte) *http.Request {
	r := req.Clone(req.Context())
	u := *req.URL
	rel := strings.TrimPrefix(u.Path, f.servers[0].Path)
	u.Scheme, u.Host, u.Path, u.RawPath = target.Scheme, target.Host, strings.TrimRight(target.Path, "/")+rel, ""
	r.URL, r.Host = &u, ""
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	return r
}

// base returns the transport that sends requests.
func (f *Failover) base() http.RoundTripper {
	if f.Base != nil {
		return f.Base
	}
	return http.DefaultTransport
}

// requestBody reads a request's body so that it can be sent again (API
// requests are small: at most 1 MiB).
func requestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	data, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return data, nil
}

// idempotent reports whether a request may be repeated after its
// connection broke.
func idempotent(method string) bool {
	return method == http.MethodGet || method == http.MethodHead
}

// drain discards and closes an answer that is not returned.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBytes))
	resp.Body.Close()
}

// sleepCtx waits d unless ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
