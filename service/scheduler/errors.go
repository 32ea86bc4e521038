package scheduler

import (
	"errors"
	"fmt"
)

// The kinds of error the lifecycle's methods return for a request that
// cannot be carried out as asked (test with errors.Is); a transport maps
// them to its statuses (package server: 404, 409). A request that is
// invalid in itself is an *api.FieldError (400). Anything else is a
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

// notFound returns an ErrNotFound with a message.
func notFound(format string, a ...any) error {
	return &requestError{msg: fmt.Sprintf(format, a...), kinds: []error{ErrNotFound}}
}

// conflict returns an ErrConflict with a message.
func conflict(format string, a ...any) error {
	return &requestError{msg: fmt.Sprintf(format, a...), kinds: []error{ErrConflict}}
}

// notRegistered returns the ErrNotRegistered of node name.
func notRegistered(name string) error {
	return &requestError{msg: fmt.Sprintf("node %q is not registered: register again", name),
		kinds: []error{ErrNotFound, ErrNotRegistered}}
}
