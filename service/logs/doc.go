// Package logs keeps the replicas' output as files, one a replica, under
// <data>/logs/<job>/<replica>.log: agents upload it in chunks (Append,
// idempotent: a chunk resent or overlapping appends only what is new) and
// the API serves it (Files); log followers wait on a Signal that fires
// when a log grows or a job changes state. Package scheduler owns a Store
// and its Signal, and hands its callers a Room: the two with the checks
// of a chunk and a job's status, reading the shell through Jobs (the
// service's: Table, over package jobs' table).
package logs
