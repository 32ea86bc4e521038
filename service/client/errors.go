package client

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/gpusched/gpusched/service/api"
)

// Error is an error answer (4xx, 5xx) of the server.
type Error struct {
	// Status is the HTTP status code, e.g. 400.
	Status int
	// Body is the server's error object; when the answer did not carry
	// one (a proxy's page, say), Body.Error holds the status text or the
	// start of the answer.
	Body api.Error
}

// Error returns "server: STATUS MESSAGE", e.g.
// "server: 400 min_gpus: 5 is above max_gpus 4".
func (e *Error) Error() string {
	msg := e.Body.Error
	if f := e.Body.Field; f != "" && !strings.HasPrefix(msg, f+":") {
		msg = f + ": " + msg
	}
	return fmt.Sprintf("server: %d %s", e.Status, msg)
}

// NotFound reports whether the server answered 404.
func (e *Error) NotFound() bool { return e.Status == http.StatusNotFound }

// BadRequest reports whether the server rejected the request's content
// (400 Bad Request, 413 Request Entity Too Large): the caller's input is at
// fault, not the server.
func (e *Error) BadRequest() bool {
	return e.Status == http.StatusBadRequest || e.Status == http.StatusRequestEntityTooLarge
}

// Unauthorized reports whether the server answered 401 (no token, or a bad,
// revoked or expired one).
func (e *Error) Unauthorized() bool { return e.Status == http.StatusUnauthorized }

// Forbidden reports whether the server answered 403 (the token may not do
// this).
func (e *Error) Forbidden() bool { return e.Status == http.StatusForbidden }

// Conflict reports whether the server answered 409 (e.g. cancelling a job
// that has already ended).
func (e *Error) Conflict() bool { return e.Status == http.StatusConflict }

// StatusOf returns the HTTP status of err when it is (or wraps) an *Error,
// and 0 otherwise.
func StatusOf(err error) int {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Status
	}
	return 0
}

// UnreachableError reports that no server answered at URL: the connection
// was refused, the host is unknown, or the dial timed out.
type UnreachableError struct {
	// URL is the server's base URL.
	URL string
	// Err is the transport's error.
	Err error
}

// Error names the URL and says how to get a server.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the gpusched server at %s (%s): start one with `gpusched dev`, "+
		"or point --server or $GPUSCHED_SERVER at a running server", e.URL, dialReason(e.Err))
}

// Unwrap returns the transport's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// unreachable reports whether a transport error means that no server
// answered at all (as opposed to a connection that broke mid-answer).
func unreachable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return true
	}
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "dial" {
		return true
	}
	return false
}

// dialReason is a short cause for UnreachableError's message.
func dialReason(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	}
	if de, ok := errors.AsType[*net.DNSError](err); ok {
		return "unknown host " + de.Name
	}
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}
