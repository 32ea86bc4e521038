package scheduler

import "github.com/gpusched/gpusched/service/settings"

// Config configures a Scheduler: package settings' Config, its defaults
// and checks (Config.Check).
type Config = settings.Config

// ErrConfig marks the errors of New caused by its configuration (rather
// than by the store): test with errors.Is.
var ErrConfig = settings.ErrConfig

// Defaults for Config's zero fields (package settings').
const (
	DefaultHeartbeatInterval = settings.DefaultHeartbeatInterval
	DefaultHeartbeatTimeout  = settings.DefaultHeartbeatTimeout
	DefaultRound             = settings.DefaultRound
	DefaultCoalesce          = settings.DefaultCoalesce
	DefaultPortBase          = settings.DefaultPortBase
	DefaultPortRange         = settings.DefaultPortRange
)

// StorePath returns the path of the bbolt store in a data directory.
func StorePath(dataDir string) string { return settings.StorePath(dataDir) }
