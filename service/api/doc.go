// Package api holds the wire types of the scheduler service: the job spec
// users submit (as JSON to POST /v1/jobs, or as YAML to gpusched submit), the
// job, node and error objects the server answers with, and the protocol
// between the server and its agents (registration, status reports, the work
// each agent must run, log chunks).
//
// It is the contract that the server, the agent, the Go client and the
// OpenAPI document (api/openapi.yaml, served at /openapi.yaml) share. It
// decodes and validates input strictly — unknown fields are errors, every
// error names the field — and does no other I/O.
package api
