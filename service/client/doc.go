// Package client is the Go client of the scheduler service's REST API
// (/v1, DESIGN.md "Command line"): submit, list, inspect and cancel jobs,
// read their logs, list nodes. It speaks the wire types of package api and
// turns the server's error bodies into *Error values, so that a caller (the
// gpusched CLI) can show the server's own message and tell bad input (400,
// 413) from a missing job (404) from an unreachable server
// (*UnreachableError).
//
// A Client holds no state besides its base URL and HTTP client; it is safe
// for concurrent use. Deadlines and cancellation come from the context of
// each call.
package client
