// Package auth is the scheduler service's authentication: bearer tokens
// stored hashed in the store (users' tokens with a role, agents' join
// tokens, nodes' credentials), job tokens derived from a server secret, the
// identity a token stands for, the audit log of mutations, and the TLS
// material of a self-signed deployment (a CA in the data directory). The
// HTTP transport (package server) authenticates every request with it and
// hands the identity to the job lifecycle (package scheduler), which
// decides what the identity may do. docs/SECURITY.md describes the model.
//
// # Tokens
//
// A token is "gps_" + kind letter + "_" + 16 hex digits of ID + "_" + 43
// characters of secret (32 random bytes, base64url): "gps_u_…" for a
// user's, "gps_j_…" a join token, "gps_n_…" a node's credential. The store
// keeps, under "auth/tokens/<ID>", the token's description and the
// SHA-256 of the whole token, never the token; Verify looks the ID up and
// compares hashes in constant time, on every request, so a revoked token
// (its record deleted) stops working at once, on every server that shares
// the store. A job token, "gps_b_<job>_<mac>", is an HMAC-SHA256 of the
// job's ID under a secret kept in the store ("auth/secret"): the agent
// puts it in the job's environment (GPUSCHED_TOKEN) so that the job can
// report its progress and read its host list, and it works only for that
// job, only while the job is active.
//
// The first start writes a bootstrap admin token to DATA/admin.token (mode
// 0600). Deleting the file and restarting revokes the old one and writes a
// new one: whoever can read the data directory is an administrator anyway.
//
// # Audit
//
// Every mutation the server accepts is recorded under "audit/<time>"
// (Audit.Record): who, what, on what, with which status. Denied requests
// change nothing and are logged, not recorded.
package auth
