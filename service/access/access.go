package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/auth"
	"github.com/gpusched/gpusched/service/queues"
)

// ErrForbidden: the caller is who it says, but may not do what it asks
// (HTTP 403). Its message names the caller and what was missing.
var ErrForbidden = errors.New("forbidden")

// forbidden returns an ErrForbidden with a message (and the field it is
// about, when there is one: a transport shows it).
func forbidden(field, format string, a ...any) error {
	return &accessError{msg: fmt.Sprintf(format, a...), field: field}
}

// accessError is an ErrForbidden that may name a field of the request.
type accessError struct {
	msg, field string
}

func (e *accessError) Error() string { return e.msg }
func (e *accessError) Unwrap() error { return ErrForbidden }

// Field returns the request's field the refusal is about, or "".
func (e *accessError) Field() string { return e.field }

// Lifecycle is the job lifecycle the rules guard (package scheduler's
// Scheduler): its requests, made on nobody's behalf.
type Lifecycle interface {
	Submit(ctx context.Context, spec api.JobSpec) (api.Job, error)
	Jobs(states ...api.State) []api.Job
	Job(id string) (api.Job, error)
	Cancel(id string) (api.Job, error)
	Progress(id string, p api.Progress) (api.Job, error)
	Hostfile(id string) (string, error)
}

// Guard makes the lifecycle's requests on behalf of a caller (the
// identity the transport authenticated, docs/SECURITY.md): jobs belong to
// the user who submitted them; a user sees and controls their own jobs
// and sees the jobs of their queues (read-only); an admin, and the
// anonymous caller of a server without authentication, may do everything;
// a job's token may report the job's progress and read its host list;
// nodes and join tokens have no part in the job API.
type Guard struct {
	s      Lifecycle
	queues *config.QueuesSpec
}

// New returns the guard of lifecycle s with the teams' queues (nil: none).
func New(s Lifecycle, queues *config.QueuesSpec) *Guard { return &Guard{s: s, queues: queues} }

// SubmitAs submits spec for who: the job belongs to who's user (only an
// admin may name another user); its queue is the spec's, which who must
// be allowed to submit to, else who's first queue, else the default
// queue.
func (g *Guard) SubmitAs(ctx context.Context, who auth.Identity, spec api.JobSpec) (api.Job, error) {
	if who.Kind != "" && who.Kind != auth.KindUser {
		return api.Job{}, forbidden("", "%s may not submit jobs: a user's token is required", who)
	}
	if who.Kind == auth.KindUser {
		if spec.User != "" && spec.User != who.User && !who.Admin() {
			return api.Job{}, forbidden("user", "user %s may not submit jobs as user %s (admins only)", who.User, spec.User)
		}
		if spec.User == "" {
			spec.User = who.User
		}
	}
	if spec.Queue == "" {
		if qs := g.userQueues(spec.User, false); len(qs) > 0 {
			spec.Queue = qs[0]
		}
	} else if !who.Admin() && !slices.Contains(g.userQueues(who.User, true), spec.Queue) && g.knownQueue(spec.Queue) {
		return api.Job{}, forbidden("queue", "user %s may not submit to queue %s (its users are %s)", who.User, spec.Queue,
			strings.Join(g.queues.QueueUsers(spec.Queue), ", "))
	}
	return g.s.Submit(ctx, spec)
}

// JobsAs returns the jobs who may see (Jobs).
func (g *Guard) JobsAs(who auth.Identity, states ...api.State) []api.Job {
	all := g.s.Jobs(states...)
	if who.Admin() {
		return all
	}
	return slices.DeleteFunc(all, func(j api.Job) bool { return g.canSee(who, &j) != nil })
}

// JobAs returns job id if who may see it (Job); ErrForbidden otherwise.
func (g *Guard) JobAs(who auth.Identity, id string) (api.Job, error) {
	j, err := g.s.Job(id)
	if err != nil {
		return j, err
	}
	if err := g.canSee(who, &j); err != nil {
		return api.Job{}, err
	}
	return j, nil
}

// CancelAs cancels job id if who may control it (Cancel).
func (g *Guard) CancelAs(who auth.Identity, id string) (api.Job, error) {
	j, err := g.s.Job(id)
	if err != nil {
		return j, err
	}
	if err := g.canControl(who, &j, "cancel"); err != nil {
		return api.Job{}, err
	}
	return g.s.Cancel(id)
}

// ProgressAs records job id's progress if who may report it: its owner,
// an admin, or the job itself (its token).
func (g *Guard) ProgressAs(who auth.Identity, id string, p api.Progress) (api.Job, error) {
	if err := g.jobOrOwner(who, id, "report the progress of"); err != nil {
		return api.Job{}, err
	}
	return g.s.Progress(id, p)
}

// HostfileAs returns job id's host list if who may see the job or is the
// job itself.
func (g *Guard) HostfileAs(who auth.Identity, id string) (string, error) {
	if who.Kind != auth.KindJob {
		if _, err := g.JobAs(who, id); err != nil {
			return "", err
		}
	} else if err := g.jobOrOwner(who, id, "read the host list of"); err != nil {
		return "", err
	}
	return g.s.Hostfile(id)
}

// CheckEDL reports whether who may use job id's EDL state (its master
// lock, task queue and pserver slots, docs/EDL.md): an admin, the job's
// owner, or the job itself (its token) while it is active. what names the
// action for the refusal's message.
func (g *Guard) CheckEDL(who auth.Identity, id, what string) error {
	return g.jobOrOwner(who, id, what)
}

// CheckLogs reports whether who may read job id's logs (those who may see
// the job).
func (g *Guard) CheckLogs(who auth.Identity, id string) error {
	_, err := g.JobAs(who, id)
	return err
}

// jobOrOwner allows who to act on job id: an admin, its owner, or the job
// itself while it is active.
func (g *Guard) jobOrOwner(who auth.Identity, id, what string) error {
	j, err := g.s.Job(id)
	if err != nil {
		return err
	}
	if who.Kind == auth.KindJob {
		if who.Job != id {
			return forbidden("", "the token of job %s may not %s job %s", who.Job, what, id)
		}
		if j.State.Final() {
			return forbidden("", "job %s has ended: its token no longer works", id)
		}
		return nil
	}
	return g.canControl(who, &j, what)
}

// canSee allows who to see job j: an admin, its owner, a user of its
// queue, or the job itself.
func (g *Guard) canSee(who auth.Identity, j *api.Job) error {
	switch {
	case who.Admin():
		return nil
	case who.Kind == auth.KindJob && who.Job == j.ID:
		return nil
	case who.Kind == auth.KindUser && (j.User == who.User || g.member(who.User, j.Queue)):
		return nil
	case who.Kind == auth.KindUser:
		return forbidden("", "user %s may not see job %s of user %s (its owner, the users of queue %s and admins may)",
			who.User, j.ID, orNone(j.User), queues.Name(j.Queue))
	}
	return forbidden("", "%s may not see jobs: a user's token is required", who)
}

// canControl allows who to change job j: an admin or its owner.
func (g *Guard) canControl(who auth.Identity, j *api.Job, what string) error {
	if who.Admin() || (who.Kind == auth.KindUser && j.User == who.User) {
		return nil
	}
	if who.Kind == auth.KindUser {
		return forbidden("", "user %s may not %s job %s of user %s (its owner and admins may)", who.User, what, j.ID, orNone(j.User))
	}
	return forbidden("", "%s may not %s jobs: a user's token is required", who, what)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// userQueues returns the queues user may submit to, in configuration
// order: those that list them, then (with open) those that list nobody.
func (g *Guard) userQueues(user string, open bool) []string {
	q := g.queues
	if q == nil {
		return nil
	}
	var out, rest []string
	for _, qs := range q.Queues {
		switch {
		case slices.Contains(qs.Users, user):
			out = append(out, qs.Name)
		case len(qs.Users) == 0:
			rest = append(rest, qs.Name)
		}
	}
	if open {
		out = append(out, rest...)
	}
	return out
}

// member reports whether user is listed in queue q.
func (g *Guard) member(user, q string) bool {
	return user != "" && slices.Contains(g.queues.QueueUsers(q), user)
}

// knownQueue reports whether q is a declared queue.
func (g *Guard) knownQueue(q string) bool {
	if g.queues == nil {
		return false
	}
	return slices.ContainsFunc(g.queues.Queues, func(qs config.QueueSpec) bool { return qs.Name == q })
}

// IdentityView returns who as the API shows it (GET /v1/whoami), with the
// queues a user may submit to.
func (g *Guard) IdentityView(who auth.Identity) api.Identity {
	v := api.Identity{Kind: who.Kind, User: who.User, Role: who.Role, Node: who.Node, Job: who.Job, TokenID: who.TokenID}
	if who.Kind == "" {
		v.Kind, v.Role = "anonymous", api.RoleAdmin
	}
	if who.Kind == auth.KindUser {
		v.Queues = g.userQueues(who.User, true)
	}
	return v
}
