package agent

// Error is a kind of error returned by this package; callers test for one
// with errors.Is.
type Error string

// The kinds of error returned by this package.
const (
	// ErrInvalidConfig is wrapped by New's errors about a Config field, as
	// opposed to a data directory it cannot create.
	ErrInvalidConfig Error = "invalid agent config"
	// errUnknownNode ends a session when the server no longer knows the
	// node.
	errUnknownNode Error = "the server does not know this node"
)

// Error returns the kind's text.
func (e Error) Error() string { return string(e) }
