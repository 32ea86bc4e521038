package server

import (
	"log"
	"net/http"
	"time"
)

// Limits bound what a client may make the HTTP server wait for or hold
// (NewHTTPServer); the zero value takes the defaults.
type Limits struct {
	// ReadHeaderTimeout is how long a request's headers may take to
	// arrive (default 10 s): a slower client is disconnected.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long (default 2
	// minutes).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (default 64 KiB): larger
	// ones are answered 431.
	MaxHeaderBytes int
}

// Defaults of Limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
)

// NewHTTPServer returns the http.Server that serves h with the limits l
// (request bodies have their own deadline: Config.BodyTimeout). There is
// no overall read or write timeout: work long-polls and followed logs
// stay open on purpose.
func NewHTTPServer(h http.Handler, errorLog *log.Logger, l Limits) *http.Server {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, IdleTimeout: l.IdleTimeout,
		MaxHeaderBytes: l.MaxHeaderBytes, ErrorLog: errorLog}
}
