package kube

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// authTTL is how long an Authenticator keeps a decision about a token.
const authTTL = 10 * time.Second

// authCacheMax bounds the decisions an Authenticator keeps.
const authCacheMax = 1024

// Authenticator guards HTTP endpoints as kube-scheduler guards its
// /metrics: a request needs a bearer token that the API server accepts
// (a TokenReview) for a user the API server allows to get the path (a
// SubjectAccessReview of the non-resource URL). Decisions are kept for
// authTTL. `gpusched kube` puts it in front of /metrics when it serves
// beyond loopback.
type Authenticator struct {
	client kubernetes.Interface
	log    *slog.Logger
	mu     sync.Mutex
	cache  map[[sha256.Size]byte]authDecision
}

// authDecision is the answer to one token and path: the HTTP status (200
// when allowed) and the message of a refusal.
type authDecision struct {
	status int
	msg    string
	until  time.Time
}

// NewAuthenticator returns an Authenticator that asks the API server
// through client (which may create TokenReviews and SubjectAccessReviews:
// the ClusterRole system:auth-delegator).
func NewAuthenticator(client kubernetes.Interface, log *slog.Logger) *Authenticator {
	return &Authenticator{client: client, log: log, cache: map[[sha256.Size]byte]authDecision{}}
}

// Wrap returns h behind the check: 401 without an accepted token, 403 for
// a user not allowed to get the path, 503 when the API server cannot be
// asked.
func (a *Authenticator) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || strings.TrimSpace(token) == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gpusched"`)
			http.Error(w, "unauthorized: send a Kubernetes bearer token (Authorization: Bearer TOKEN) of a user allowed to get "+r.URL.Path, http.StatusUnauthorized)
			return
		}
		d := a.decide(r.Context(), strings.TrimSpace(token), r.URL.Path)
		if d.status != http.StatusOK {
			if d.status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="gpusched"`)
			}
			http.Error(w, d.msg, d.status)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// decide returns the cached decision for token and path, or asks the API
// server.
func (a *Authenticator) decide(ctx context.Context, token, path string) authDecision {
	key := sha256.Sum256([]byte(path + "\x00" + token))
	now := time.Now()
	a.mu.Lock()
	d, ok := a.cache[key]
	a.mu.Unlock()
	if ok && now.Before(d.until) {
		return d
	}
	d = a.review(ctx, token, path)
	if d.status == http.StatusServiceUnavailable {
		return d // not kept: the next request asks again
	}
	d.until = now.Add(authTTL)
	a.mu.Lock()
	if len(a.cache) >= authCacheMax {
		clear(a.cache)
	}
	a.cache[key] = d
	a.mu.Unlock()
	return d
}

// review asks the API server who the token is and whether that user may
// get path.
func (a *Authenticator) review(ctx context.Context, token, path string) authDecision {
	tr, err := a.client.AuthenticationV1().TokenReviews().Create(ctx,
		&authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		a.log.Warn("cannot review a token with the API server", "err", err)
		return authDecision{status: http.StatusServiceUnavailable, msg: "cannot check the token with the Kubernetes API server"}
	}
	if !tr.Status.Authenticated {
		return authDecision{status: http.StatusUnauthorized, msg: "unauthorized: the Kubernetes API server does not accept the token"}
	}
	u := tr.Status.User
	extra := map[string]authzv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	sar, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{
		Spec: authzv1.SubjectAccessReviewSpec{User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
			NonResourceAttributes: &authzv1.NonResourceAttributes{Path: path, Verb: "get"}}}, metav1.CreateOptions{})
	if err != nil {
		a.log.Warn("cannot review an access with the API server", "err", err)
		return authDecision{status: http.StatusServiceUnavailable, msg: "cannot check the access with the Kubernetes API server"}
	}
	if !sar.Status.Allowed {
		return authDecision{status: http.StatusForbidden,
			msg: fmt.Sprintf("forbidden: user %q may not get %s (grant nonResourceURLs [%q], verbs [get])", u.Username, path, path)}
	}
	return authDecision{status: http.StatusOK}
}
