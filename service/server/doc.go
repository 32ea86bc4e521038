// Package server is the scheduler service's HTTP transport (`gpusched
// server`): the REST API under /v1 (jobs, nodes, logs, profiles, power
// samples, forecasts and the dashboard's views: eta.go), the agent
// protocol over HTTP (registration, the work long-poll, status reports,
// log upload), /metrics, /healthz, /openapi.yaml, and the dashboard's
// embedded pages under /ui (ui.go, the files in ui/).
//
// It holds no state of its own. Everything a request does — the job
// records, the nodes, the scheduling loop — is a method of the job
// lifecycle, package scheduler; a handler decodes and checks the request
// strictly (api.Decode*, query parameters), calls the method, and maps its
// error to a status (scheduler.ErrNotFound 404, scheduler.ErrConflict 409,
// *api.FieldError 400, store.ErrClosed 503, else 500) or encodes its
// result. What stays here is what is HTTP's: routes and their 405/404
// answers, body limits (413), the long poll's query parameters, following
// a job's logs as a stream (logs.go), the CSV of power samples.
//
// New builds the scheduler and the transport from one Config; Attach puts
// the transport over a scheduler built elsewhere (another arrangement of
// transports over the same lifecycle). Middleware (authentication, say)
// wraps Handler.
//
// NewHA is the transport of one of several servers sharing an etcd store
// (ha.go): the servers elect a leader (package leader); the leader builds
// a scheduler per term on the store behind the fence of its election key
// and serves the whole API with a Server attached to it; a follower
// answers reads of jobs and nodes from the store and redirects everything
// else to the leader (307), or answers 503 with Retry-After while no
// leader is known. GET /v1/leader names the leader in both modes. The EDL
// endpoints of a job (edl.go, package edl) are served by the leader.
//
// See docs/SERVER.md for the endpoints and their answers.
package server
