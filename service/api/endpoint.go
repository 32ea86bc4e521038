package api

import (
	"time"

	"github.com/gpusched/gpusched/config"
)

// CheckEndpoint reports what is wrong with a data endpoint:
// config.CheckEndpoint ("host:port" or an http(s) URL), nil when nothing
// is.
func CheckEndpoint(e string) error { return config.CheckEndpoint(e) }

// ProbeResult is one measurement of an agent's round-trip time to a data
// endpoint, sent with its status reports (Status.Probes).
type ProbeResult struct {
	// Endpoint is the address probed, as Work.Probes lists it.
	Endpoint string    `json:"endpoint"`
	At       time.Time `json:"at"`
	// RTTMs is the round-trip time in milliseconds; 0 with Error.
	RTTMs float64 `json:"rtt_ms,omitempty"`
	// Error says why the endpoint could not be reached; empty on success.
	Error string `json:"error,omitempty"`
}

// EndpointRTT is what the server knows of a node's distance to a storage
// device (GET /v1/nodes): the median of its latest probes of the address by
// which the node reaches the device.
type EndpointRTT struct {
	// Storage is the device: a storage device of the cluster file, or the
	// data endpoint itself for one that jobs name.
	Storage  string `json:"storage"`
	Endpoint string `json:"endpoint"`
	// RTTMs is the median of the successful probes among the latest
	// (0 when none succeeded); Samples their number.
	RTTMs   float64 `json:"rtt_ms,omitempty"`
	Samples int     `json:"samples"`
	// Reachable is false when the latest probe failed; Error says why.
	Reachable bool      `json:"reachable"`
	Error     string    `json:"error,omitempty"`
	At        time.Time `json:"at"`
}
