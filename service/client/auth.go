package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/auth"
)

// Environment variables of the client's credentials.
const (
	// EnvToken holds the bearer token (docs/SECURITY.md).
	EnvToken = "GPUSCHED_TOKEN"
	// EnvCA names the CA certificate file to trust (a self-signed
	// server's DATA/tls/ca.crt).
	EnvCA = "GPUSCHED_CA"
)

// Options are a client's credentials and trust.
type Options struct {
	// Token is sent as "Authorization: Bearer <Token>" on every request;
	// empty sends none.
	Token string
	// CAFile, when set, is the CA certificate (PEM) the server's
	// certificate must chain to; otherwise the system's roots.
	CAFile string
}

// HTTPClient returns an http.Client that trusts o.CAFile and sends o.Token
// (no overall timeout: bound each call with its context).
func (o Options) HTTPClient() (*http.Client, error) {
	rt, err := o.Transport()
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt}, nil
}

// Transport returns the round tripper that trusts o.CAFile and sends
// o.Token.
func (o Options) Transport() (http.RoundTripper, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if o.CAFile != "" {
		pool, err := auth.CAPool(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA certificate: %w", err)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if o.Token != "" {
		return bearerTransport{token: o.Token, next: tr}, nil
	}
	return tr, nil
}

// NewWithOptions returns a client of the server, or comma-separated list
// of servers sharing an etcd store (NewList: it follows the leader), at
// list, with o's token and trust.
func NewWithOptions(list string, o Options) (*Client, error) {
	rt, err := o.Transport()
	if err != nil {
		return nil, err
	}
	return NewList(list, rt)
}

// bearerTransport adds the bearer token to requests that carry none.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// Whoami returns the identity of the client's token (GET /v1/whoami).
func (c *Client) Whoami(ctx context.Context) (api.Identity, error) {
	var id api.Identity
	err := c.call(ctx, http.MethodGet, "/v1/whoami", nil, http.StatusOK, &id)
	return id, err
}

// CreateToken creates a token (admins; POST /v1/tokens).
func (c *Client) CreateToken(ctx context.Context, req api.TokenRequest) (api.TokenCreated, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return api.TokenCreated{}, fmt.Errorf("encode token request: %w", err)
	}
	var t api.TokenCreated
	err = c.call(ctx, http.MethodPost, "/v1/tokens", body, http.StatusCreated, &t)
	return t, err
}

// Tokens lists the tokens (admins).
func (c *Client) Tokens(ctx context.Context) ([]api.TokenInfo, error) {
	var l api.TokenList
	if err := c.call(ctx, http.MethodGet, "/v1/tokens", nil, http.StatusOK, &l); err != nil {
		return nil, err
	}
	if l.Tokens == nil {
		l.Tokens = []api.TokenInfo{}
	}
	return l.Tokens, nil
}

// RevokeToken revokes token id (admins).
func (c *Client) RevokeToken(ctx context.Context, id string) (api.TokenInfo, error) {
	var t api.TokenInfo
	err := c.call(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(id), nil, http.StatusOK, &t)
	return t, err
}

// Audit returns the latest limit entries of the audit log (admins).
func (c *Client) Audit(ctx context.Context, limit int) ([]api.AuditEntry, error) {
	var l api.AuditList
	if err := c.call(ctx, http.MethodGet, "/v1/audit?limit="+strconv.Itoa(limit), nil, http.StatusOK, &l); err != nil {
		return nil, err
	}
	return l.Entries, nil
}

// Queues returns the teams' queues (GET /v1/queues).
func (c *Client) Queues(ctx context.Context) (api.QueueList, error) {
	var l api.QueueList
	err := c.call(ctx, http.MethodGet, "/v1/queues", nil, http.StatusOK, &l)
	return l, err
}
