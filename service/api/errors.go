package api

import (
	"errors"
	"fmt"
)

// FieldError is a problem with one field of a request; Field is empty when
// the problem is with the request as a whole (malformed JSON).
type FieldError struct {
	Field   string
	Message string
}

// Error returns "field: message" (or the message alone).
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func fieldErr(field, format string, a ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, a...)}
}

// Error is the body of every 4xx and 5xx answer.
type Error struct {
	// Error says what went wrong, e.g. "min_gpus: 5 is above max_gpus 4".
	Error string `json:"error"`
	// Field names the offending field of the request, when there is one.
	Field string `json:"field,omitempty"`
}

// The kinds of error the scheduler's methods (package scheduler and its
// rooms: energy, learn, forecast, logs) return for a request that
// cannot be carried out as asked (test with errors.Is); a transport maps
// them to its statuses (package server: 404, 409). A request that is
// invalid in itself is a *FieldError (400). Anything else is a
// failure of the scheduler or its store (500; store.ErrClosed while it
// shuts down, 503).
var (
	// ErrNotFound: the job, node or replica a request names does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request does not fit the job's state (a cancel of a
	// job that has ended, the host list of a job that is not running).
	ErrConflict = errors.New("conflict")
	// ErrNotRegistered: an agent's request names a node that is not
	// registered (or was marked down): the agent must register again. It
	// is also an ErrNotFound.
	ErrNotRegistered = errors.New("node not registered")
)

// requestError is an error of one of the kinds above whose message is
// meant for the user as it is.
type requestError struct {
	msg   string
	kinds []error
}

func (e *requestError) Error() string   { return e.msg }
func (e *requestError) Unwrap() []error { return e.kinds }

// NotFound returns an ErrNotFound with a message.
func NotFound(format string, a ...any) error {
	return &requestError{msg: fmt.Sprintf(format, a...), kinds: []error{ErrNotFound}}
}

// Conflict returns an ErrConflict with a message.
func Conflict(format string, a ...any) error {
	return &requestError{msg: fmt.Sprintf(format, a...), kinds: []error{ErrConflict}}
}

// NotRegistered returns the ErrNotRegistered of node name.
func NotRegistered(name string) error {
	return &requestError{msg: fmt.Sprintf("node %q is not registered: register again", name),
		kinds: []error{ErrNotFound, ErrNotRegistered}}
}
