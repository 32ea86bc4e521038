// Package service holds the scheduler-service shell, one package a folder:
// api (the wire types, strict decoding and the OpenAPI document), server
// (the REST API, the durable job lifecycle and the scheduling loop that
// runs the core's engine on the real clock), agent (the node agent that
// runs replicas under their shims), store (the durable, revisioned store)
// and client (the Go client the CLI uses).
//
// Service packages do I/O and may import core/, each other, sim/ (a
// forecast runs the simulator on the live state), internal/ and config/
// (the cluster and scheduler files), never cli/, which sits on top of
// them (core/purity_test.go checks the layers).
package service
