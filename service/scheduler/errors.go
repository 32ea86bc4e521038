package scheduler

import "github.com/gpusched/gpusched/service/api"

// The kinds of error the scheduler's methods return (api.ErrNotFound and
// the others, test with errors.Is), under the names its callers know.
var (
	ErrNotFound      = api.ErrNotFound
	ErrConflict      = api.ErrConflict
	ErrNotRegistered = api.ErrNotRegistered
)
