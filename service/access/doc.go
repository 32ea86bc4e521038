// Package access holds the job lifecycle's rules on behalf of a caller
// (docs/SECURITY.md): Guard makes the requests of package scheduler (its
// plain, unguarded methods, through the Lifecycle interface) for an
// authenticated identity — jobs belong to the user who submitted them; a
// user sees and controls their own jobs and sees the jobs of their queues
// (read-only); an admin, and the anonymous caller of a server without
// authentication, may do everything; a job's token may report the job's
// progress and read its host list; nodes and join tokens have no part in
// the job API. A refusal is an ErrForbidden whose message names the caller
// and what was missing. Package server calls it for every job request.
package access
