// Package service holds the scheduler-service shell, one package a folder:
// api (the wire types, strict decoding and the OpenAPI document),
// scheduler (the job lifecycle: durable job records and their
// transactions, nodes and their agents' work, and the scheduling loop that
// runs the core's engine on the real clock; no transport), server (its
// HTTP transport: the REST API and the agent protocol), agent (the node
// agent that runs replicas under their shims), confine (a replica's
// cgroup: its limits, its devices, its kill), store (the durable,
// revisioned store), client (the Go client the CLI uses) and forecast
// (start and finish forecasts: the live state simulated forward).
//
// Service packages do I/O and may import core/, each other, sim/ (a
// forecast runs the simulator on the live state), internal/ and config/
// (the cluster and scheduler files), never cli/, which sits on top of
// them (core/purity_test.go checks the layers). Within the service,
// scheduler imports no transport (its TestNoTransport checks it): server
// imports scheduler, not the other way round.
package service
