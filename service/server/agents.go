package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/auth"
)

// The agent protocol over HTTP (docs/AGENT.md); its semantics are the
// scheduler's (Register, Work, Status, AppendLog).

// handleRegister is POST /v1/agents/register.
// With authentication, a node's credential registers its own node again; a
// join token registers a new node and gets it a credential of its own, in
// the answer (docs/SECURITY.md), unless the name already has one.
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	var reg api.Register
	if !readJSON(w, r, &reg) {
		return
	}
	setTarget(r, reg.Name)
	who := caller(r)
	var cred, credID string
	switch who.Kind {
	case auth.KindNode:
		if reg.Name != who.Node {
			writeError(w, http.StatusForbidden, "name", "forbidden: the credential of node %s may not register node %q", who.Node, reg.Name)
			return
		}
	case auth.KindJoin:
		if err := s.sched.CheckRegister(reg); err != nil {
			s.writeErr(w, err)
			return
		}
		var err error
		if cred, err = s.tokens.CreateNode(r.Context(), reg.Name, who.String()); err != nil {
			if errors.Is(err, auth.ErrNodeTaken) {
				writeError(w, http.StatusForbidden, "name", "forbidden: node %q already has a credential: its agent must present it "+
					"(it keeps it in its data directory, node.token), or an admin revokes it (gpusched token list; gpusched token revoke ID)", reg.Name)
				return
			}
			s.writeFailure(w, err)
			return
		}
		if v, err := s.tokens.Verify(r.Context(), cred); err == nil {
			credID = v.TokenID
		}
	}
	reply, err := s.sched.Register(reg)
	if err != nil {
		if credID != "" {
			_, _ = s.tokens.Revoke(context.WithoutCancel(r.Context()), credID) // nothing half-made
		}
		s.writeErr(w, err)
		return
	}
	reply.Credential = cred
	writeJSON(w, http.StatusOK, reply)
}

// handleWork is GET /v1/agents/{name}/work?after=V[&wait=D]: the node's
// work as soon as its version differs from V, or after the wait.
func (s *Server) handleWork(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, err := strconv.ParseInt(q.Get("after"), 10, 64)
	if q.Get("after") == "" {
		after, err = 0, nil
	}
	if err != nil || after < 0 {
		writeError(w, http.StatusBadRequest, "after", "after=%q: want the version of the work the agent has applied", q.Get("after"))
		return
	}
	wait, ok := parseWait(q.Get("wait"), s.pollTimeout)
	if !ok {
		writeError(w, http.StatusBadRequest, "wait", "wait=%q: want seconds or a duration such as 25s, at most %s", q.Get("wait"), MaxPollTimeout)
		return
	}
	work, err := s.sched.Work(r.Context(), r.PathValue("name"), after, wait)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, work)
}

// parseWait reads the wait parameter: seconds ("10", "0.5") or a Go
// duration ("10s"); empty gives def.
func parseWait(v string, def time.Duration) (time.Duration, bool) {
	if v == "" {
		return def, true
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil {
			return 0, false
		}
		d = time.Duration(f * float64(time.Second))
	}
	if d < 0 || d > MaxPollTimeout {
		return 0, false
	}
	return d, true
}

// handleStatus is POST /v1/agents/{name}/status: a heartbeat with the
// node's replicas; the answer is the node's work with the results stored.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	var st api.Status
	if !readJSON(w, r, &st) {
		return
	}
	work, err := s.sched.Status(r.PathValue("name"), st)
	if err != nil {
		s.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, work)
}

// handleLogUpload is POST /v1/agents/{name}/logs.
func (s *Server) handleLogUpload(w http.ResponseWriter, r *http.Request) {
	var c api.LogChunk
	if !readJSON(w, r, &c) {
		return
	}
	ack, err := s.sched.Logs().Append(r.PathValue("name"), c)
	if fe, ok := errors.AsType[*api.FieldError](err); ok {
		// The answer names the field and says what is wrong with it
		// without repeating the field's name.
		writeError(w, http.StatusBadRequest, fe.Field, "%s", fe.Message)
		return
	}
	if err != nil {
		s.writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ack)
}
