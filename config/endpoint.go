package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// MaxEndpointLen bounds a data endpoint's length.
const MaxEndpointLen = 1024

// CheckEndpoint reports what is wrong with a data endpoint (a job's
// data_endpoint, a storage interface's endpoint): "host:port", whose
// round-trip time agents measure with a TCP connect, or an http:// or
// https:// URL, measured from a GET to the first byte of its answer; nil
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
