// Package settings is the scheduler service's configuration: Config (the
// store, the data directory, the engine's stages and options, the teams'
// queues, the agents' heartbeat, the rounds, the MASTER_PORT range, the
// logger, the metrics registry, the clock, the job tokens and the live
// energy's settings), its defaults (WithDefaults) and its checks (Check:
// what New of package scheduler would refuse, as an ErrConfig, without
// opening a store). Package scheduler's New takes it.
package settings
