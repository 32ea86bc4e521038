package api

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxEndpointLen bounds a data endpoint's length.
const MaxEndpointLen = 1024

// CheckEndpoint reports what is wrong with a data endpoint: "host:port"
// (the agents measure the time of a TCP connect) or an http:// or https://
// URL (the time from sending a GET to the first byte of the answer), nil
// when nothing is.
func CheckEndpoint(e string) error {
	switch {
	case len(e) > MaxEndpointLen:
		return fmt.Errorf("longer than %d bytes", MaxEndpointLen)
	case strings.ContainsAny(e, " \t\r\n\x00"):
		return errors.New("must not contain white space or control characters")
	case strings.HasPrefix(e, "http://") || strings.HasPrefix(e, "https://"):
		u, err := url.Parse(e)
		if err != nil || u.Host == "" {
			return fmt.Errorf("%q is not an http(s) URL with a host", e)
		}
		return nil
	}
	host, port, err := net.SplitHostPort(e)
	if err != nil || host == "" {
		return fmt.Errorf("%q: want host:port or an http(s) URL", e)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%q: port %q is not 1..65535", e, port)
	}
	return nil
}

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
