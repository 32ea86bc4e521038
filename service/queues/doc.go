// Package queues is the service's side of the teams' queues
// (docs/QUEUES.md): which queue a submission goes to (Check, Default), the
// queues as GET /v1/queues shows them (View: what each holds and waits
// for, its fair-share usage and share) and the durable fair-share usage
// that a restarted server remembers (Usage). The queue layer itself is the
// core's (core/quota.Policy); package scheduler calls these with its lock
// held and hands them the engine's policy, its active model jobs and its
// cluster.
package queues
