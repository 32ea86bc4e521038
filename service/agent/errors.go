package agent

// Error is a kind of error returned by this package; callers test for one
// with errors.Is.
type Error string

// The kinds of error returned by this package.
const (
	// ErrNoGPUs is wrapped by every error of GPU discovery that means "this
	// machine offers no GPUs to discover" (NVML missing, a binary built
	// without cgo, no device), as opposed to a malformed --gpus value.
	// Callers that can do without real GPUs (gpusched dev) test for it.
	ErrNoGPUs Error = "no GPUs discovered"
	// ErrInvalidConfig is wrapped by New's errors about a Config field, as
	// opposed to a data directory it cannot create.
	ErrInvalidConfig Error = "invalid agent config"
	// errUnknownNode ends a session when the server no longer knows the
	// node.
	errUnknownNode Error = "the server does not know this node"
)

// Error returns the kind's text.
func (e Error) Error() string { return string(e) }
