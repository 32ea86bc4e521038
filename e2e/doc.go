// Package e2e holds the end-to-end tests of the scheduler service: they
// build the real gpusched binary and run `dev`, `server` and `agent`
// processes on loopback with temporary data directories, submitting shell
// commands as jobs through the real CLI. The package has no code of its own.
package e2e
