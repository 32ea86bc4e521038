// Package leader elects one leader among several gpusched servers that
// share an etcd store (`gpusched server --store etcd://...`), with etcd's
// concurrency.Election: every server campaigns with a session (a lease of
// Config.TTL, kept alive while the server runs) under the store key prefix
// "leader/"; the entry with the lowest create revision leads.
//
// The leader runs the scheduler for one term (Elector.Run calls its lead
// function); the term ends when the session's lease is lost — the process
// died (etcd deletes the key after the TTL), it cannot reach a quorum of
// etcd members for the TTL, or it shuts down (it resigns). A Term names the
// election key and its mod revision: the leader's store is
// store.Fence(st, term.Key, term.Rev), so every write of the term is a
// transaction guarded by that revision, and a deposed leader that still
// runs cannot change anything.
//
// Every server also watches the election (Leader, Changed), so that a
// follower can say who leads: the HTTP transport redirects writes there.
// See docs/SERVER.md, "Several servers".
package leader
