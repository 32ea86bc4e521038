package machine

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"
)

// maxProbeBody bounds what is read of an HTTP endpoint's answer.
const maxProbeBody = 64 << 10

// Probe measures the round-trip time to a data endpoint on a fresh
// connection: for "host:port", the time a TCP connect takes (the SYN and
// its answer); for an http(s) URL, the time from writing a GET request to
// the answer's first byte on a connection already open (whatever the
// status: an answer is a round trip). ctx bounds it.
func Probe(ctx context.Context, ep string) (time.Duration, error) {
	if strings.HasPrefix(ep, "http://") || strings.HasPrefix(ep, "https://") {
		return probeHTTP(ctx, ep)
	}
	var d net.Dialer
	t0 := time.Now()
	c, err := d.DialContext(ctx, "tcp", ep)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	rtt := time.Since(t0)
	_ = c.Close()
	return rtt, nil
}

// probeHTTP times a GET of url from the request written to the first byte
// of the answer.
func probeHTTP(ctx context.Context, url string) (time.Duration, error) {
	var wrote, first time.Time
	trace := &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { wrote = time.Now() },
		GotFirstResponseByte: func() { first = time.Now() },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("probe %s: %w", url, err)
	}
	tr := &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxProbeBody))
	_ = resp.Body.Close()
	if wrote.IsZero() || first.Before(wrote) {
		return 0, fmt.Errorf("probe %s: no timing of the request", url)
	}
	return first.Sub(wrote), nil
}
