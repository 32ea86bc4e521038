// Package clienttest provides an in-memory stand-in for the scheduler
// service's REST API, for tests of package client and of the gpusched CLI:
// it answers the job, log and node endpoints with the status codes and
// bodies the real server uses (201/400/413 on submit, 404 for an unknown
// job, 409 for cancelling an ended job, streaming logs with ?follow=true)
// and lets the test drive jobs through their states.
package clienttest
