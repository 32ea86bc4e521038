// Package e2e holds the end-to-end tests of the scheduler service: they
// build the real gpusched binary and run `dev`, `server` and `agent`
// processes on loopback with temporary data directories, submitting shell
// commands as jobs through the real CLI — and, where Debian's PyTorch is
// installed (`make torch`), real PyTorch training under torchrun
// (examples/pytorch). The package has no code of its own.
package e2e
