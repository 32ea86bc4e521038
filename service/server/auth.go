package server

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gpusched/gpusched/service/access"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/auth"
)

// The transport's security (docs/SECURITY.md): every request but the
// public ones is authenticated (a bearer token, auth.Tokens.Verify: 401
// when it is missing or bad) and then allowed by the class of its route
// (403 when the token's kind may not use it); what the caller may do with a
// job is the lifecycle's to decide (scheduler.SubmitAs, ...). Every
// mutation the server accepts is recorded in the audit log before it is
// answered.

// routeClass says who may use a route.
type routeClass uint8

const (
	classPublic   routeClass = iota // anyone: /healthz, /openapi.yaml
	classUser                       // users' and admins' tokens (job tokens on their job's routes)
	classAdmin                      // admins only: tokens, the audit log
	classRegister                   // a join token or the node's credential
	classNode                       // the credential of the node the path names
)

// classify returns the class of a request's route and, for node routes,
// the node the path names.
func classify(r *http.Request) (routeClass, string) {
	p := r.URL.Path
	switch {
	case p == "/healthz" || p == "/openapi.yaml":
		return classPublic, ""
	case p == "/v1/agents/register":
		return classRegister, ""
	case strings.HasPrefix(p, "/v1/agents/"):
		name, _, _ := strings.Cut(strings.TrimPrefix(p, "/v1/agents/"), "/")
		return classNode, name
	case p == "/v1/tokens" || strings.HasPrefix(p, "/v1/tokens/") || p == "/v1/audit":
		return classAdmin, ""
	}
	return classUser, ""
}

// identityKey is the context key of a request's *request.
type identityKey struct{}

// request is what the middleware learns of a request: who made it, and
// what it acted on (handlers set target for the audit log).
type request struct {
	who    auth.Identity
	target string
	// recorded: the handler wrote the audit entry with its mutation.
	recorded bool
}

// caller returns the identity of r's caller (the anonymous zero value without
// authentication).
func caller(r *http.Request) auth.Identity {
	if rq, ok := r.Context().Value(identityKey{}).(*request); ok {
		return rq.who
	}
	return auth.Identity{}
}

// setTarget names what r acted on, for the audit log.
func setTarget(r *http.Request, target string) {
	if rq, ok := r.Context().Value(identityKey{}).(*request); ok {
		rq.target = target
	}
}

// secure wraps the routes with authentication, the route classes, the
// request body's deadline and the audit log.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		class, node := classify(r)
		rq := &request{}
		if s.tokens != nil && class != classPublic {
			who, err := s.tokens.Verify(r.Context(), bearer(r))
			if err != nil {
				s.deny(w, r, http.StatusUnauthorized, err)
				return
			}
			if err := allowed(class, node, who, r); err != nil {
				s.deny(w, r, http.StatusForbidden, err)
				return
			}
			rq.who = who
		}
		r = r.WithContext(context.WithValue(r.Context(), identityKey{}, rq))
		if r.Body != nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
			_ = http.NewResponseController(w).SetReadDeadline(s.now().Add(s.bodyTimeout))
		}
		if !audited(r, class) {
			next.ServeHTTP(w, r)
			return
		}
		s.serveAudited(w, r, rq, next)
	})
}

// bearer returns the token of r's Authorization header ("" without one, or
// the whole value when it is not "Bearer <token>", which then fails).
func bearer(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if h == "" {
		return ""
	}
	if scheme, tok, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(tok)
	}
	return h
}

// allowed checks the token's kind against the route's class.
func allowed(class routeClass, node string, who auth.Identity, r *http.Request) error {
	switch class {
	case classAdmin:
		if !who.Admin() {
			return errors.New("admin role required: " + who.String() + " may not manage tokens or read the audit log")
		}
	case classRegister:
		if who.Kind != auth.KindJoin && who.Kind != auth.KindNode {
			return errors.New("a join token or the node's credential is required to register a node; " + who.String() + " is neither")
		}
	case classNode:
		if who.Kind != auth.KindNode {
			return errors.New("the node's credential is required for the agent protocol; " + who.String() + " is not a node")
		}
		if who.Node != node {
			return errors.New("the credential of node " + who.Node + " may act only for node " + who.Node + ", not for " + node)
		}
	case classUser:
		switch who.Kind {
		case auth.KindUser:
		case auth.KindJob:
			if !jobRoute(r.URL.Path, who.Job) {
				return errors.New("the token of job " + who.Job + " may only report its progress, read its host list and use its EDL state (master, tasks, pservers)")
			}
		default:
			return errors.New(who.String() + " may not use the user API: a user's token is required")
		}
	}
	return nil
}

// jobRoute reports whether path is one a job's token may use: its own
// progress, host list and EDL state (master, tasks, pservers), or whoami.
func jobRoute(path, job string) bool {
	if path == "/v1/whoami" {
		return true
	}
	rest, ok := strings.CutPrefix(path, "/v1/jobs/"+job+"/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	switch first {
	case "progress", "hostfile":
		return rest == first
	case "master", "tasks", "pservers":
		return true
	}
	return false
}

// deny answers 401 or 403 with an api.Error naming what was missing, and
// logs it (a denial changes nothing, so it is not in the audit log).
func (s *Server) deny(w http.ResponseWriter, r *http.Request, status int, err error) {
	msg := err.Error()
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="gpusched"`)
		msg += " (send the header Authorization: Bearer <token>; gpusched login keeps a token for the CLI)"
	} else {
		msg = "forbidden: " + msg
	}
	s.log.Info("request denied", "status", status, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", err.Error())
	writeError(w, status, "authorization", "%s", msg)
}

// audited reports whether r is a mutation the audit log records: every
// POST and DELETE but the agents' periodic reports (status, log chunks),
// jobs' progress reports and the EDL data plane — task leases and their
// done/failed reports, pserver slot renewals —, which are telemetry
// (thousands a second; their effects show in the jobs' histories and the
// task queue's counters), as Kubernetes' audit policies leave out lease
// renewals. Who took a job's master role, claimed a pserver slot or
// registered its tasks is recorded.
func audited(r *http.Request, class routeClass) bool {
	if r.Method != http.MethodPost && r.Method != http.MethodDelete {
		return false
	}
	if class == classNode || strings.HasSuffix(r.URL.Path, "/progress") || edlDataPlane(r.URL.Path) {
		return false
	}
	return true
}

// edlDataPlane reports whether path is a task lease, a task report or a
// pserver slot's renewal: /v1/jobs/{id}/tasks/lease,
// .../tasks/{index}/done|failed, .../pservers/{index}/renew.
func edlDataPlane(path string) bool {
	rest, ok := strings.CutPrefix(path, "/v1/jobs/")
	if !ok {
		return false
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 3:
		return parts[1] == "tasks" && parts[2] == "lease"
	case len(parts) == 4:
		return (parts[1] == "tasks" && (parts[3] == "done" || parts[3] == "failed")) ||
			(parts[1] == "pservers" && parts[3] == "renew")
	}
	return false
}

// serveAudited runs a mutation with its answer held back until the audit
// log has the entry (when the mutation succeeded).
func (s *Server) serveAudited(w http.ResponseWriter, r *http.Request, rq *request, next http.Handler) {
	bw := &bufferedWriter{header: http.Header{}, status: http.StatusOK}
	next.ServeHTTP(bw, r)
	if bw.status < 400 && !rq.recorded {
		target := rq.target
		if target == "" {
			target = r.PathValue("id")
		}
		e := api.AuditEntry{Who: rq.who.String(), Action: r.Method + " " + r.URL.Path, Target: target, Status: bw.status}
		if err := s.audit.Record(context.WithoutCancel(r.Context()), e); err != nil {
			s.log.Error("cannot record the audit entry", "err", err, "entry", e)
		}
	}
	for k, v := range bw.header {
		w.Header()[k] = v
	}
	w.WriteHeader(bw.status)
	_, _ = w.Write(bw.body.Bytes())
}

// bufferedWriter holds an answer back.
type bufferedWriter struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }
func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}
func (b *bufferedWriter) WriteHeader(status int) {
	if !b.wrote {
		b.status, b.wrote = status, true
	}
}

// writeForbidden answers a scheduler.ErrForbidden: 403 naming what was
// missing (and the field, when the refusal is about one).
func writeForbidden(w http.ResponseWriter, err error) {
	field := "authorization"
	var fe interface{ Field() string }
	if errors.As(err, &fe) && fe.Field() != "" {
		field = fe.Field()
	}
	writeError(w, http.StatusForbidden, field, "forbidden: %v", err)
}

// isForbidden reports whether err is the lifecycle's refusal.
func isForbidden(err error) bool { return errors.Is(err, access.ErrForbidden) }
