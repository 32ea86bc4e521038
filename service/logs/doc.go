// Package logs keeps the replicas' output as files, one a replica, under
// <data>/logs/<job>/<replica>.log: agents upload it in chunks (Append,
// idempotent: a chunk resent or overlapping appends only what is new) and
// the API serves it (Files). Package scheduler owns a Store.
package logs
