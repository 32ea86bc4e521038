package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/gpusched/gpusched/service/api"
)

// maxReply bounds the size of a server answer the agent reads.
const maxReply = 64 << 20

// client speaks the agent protocol with the server.
type client struct {
	base string // server URL without a trailing slash
	name string // node name
	http *http.Client

	mu    sync.Mutex
	token string // the bearer token of every request ("" for none)
}

// setToken makes tok the bearer token of the requests that follow.
func (c *client) setToken(tok string) {
	c.mu.Lock()
	c.token = tok
	c.mu.Unlock()
}

func (c *client) bearer() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// statusError is a non-2xx answer of the server.
type statusError struct {
	Code    int
	Message string
}

// Error returns "HTTP 404: unknown node n1".
func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Code, e.Message)
}

// httpCode returns the HTTP status of err's statusError, or 0.
func httpCode(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// register registers the node (POST /v1/agents/register).
func (c *client) register(ctx context.Context, r api.Register) (api.RegisterReply, error) {
	var reply api.RegisterReply
	err := c.do(ctx, http.MethodPost, "/v1/agents/register", r, &reply)
	return reply, err
}

// work long-polls the node's work (GET /v1/agents/{name}/work?after=V).
func (c *client) work(ctx context.Context, after int64) (api.Work, error) {
	var w api.Work
	err := c.do(ctx, http.MethodGet, c.nodePath("work")+"?after="+strconv.FormatInt(after, 10), nil, &w)
	return w, err
}

// status reports the node's replicas (POST /v1/agents/{name}/status); the
// server answers with the node's work, acknowledgements included.
func (c *client) status(ctx context.Context, s api.Status) (api.Work, error) {
	var w api.Work
	err := c.do(ctx, http.MethodPost, c.nodePath("status"), s, &w)
	return w, err
}

// logs sends one chunk of output (POST /v1/agents/{name}/logs).
func (c *client) logs(ctx context.Context, ch api.LogChunk) (api.LogAck, error) {
	var ack api.LogAck
	err := c.do(ctx, http.MethodPost, c.nodePath("logs"), ch, &ack)
	return ack, err
}

// nodePath is /v1/agents/{name}/what.
func (c *client) nodePath(what string) string {
	return "/v1/agents/" + url.PathEscape(c.name) + "/" + what
}

// do sends in (if not nil) as JSON and decodes a 2xx answer into out (if
// not nil); any other answer becomes a *statusError.
func (c *client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: encode: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if tok := c.bearer(); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %w", method, path, answerError(resp.StatusCode, data))
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// answerError turns a non-2xx answer into a *statusError, with the message
// of its api.Error body when it has one.
func answerError(code int, body []byte) *statusError {
	var e api.Error
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return &statusError{Code: code, Message: e.Error}
	}
	msg := string(bytes.TrimSpace(body))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	if msg == "" {
		msg = http.StatusText(code)
	}
	return &statusError{Code: code, Message: msg}
}
