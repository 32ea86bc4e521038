package api

import (
	"strings"
	"time"
	"unicode"
)

// Authentication and authorization (docs/SECURITY.md). Every request but
// GET /healthz and GET /openapi.yaml carries a bearer token
// ("Authorization: Bearer <token>") when the server requires
// authentication: a user's token (role user or admin), a join token (for
// POST /v1/agents/register only), a node's credential (for its own agent
// protocol only) or a job's token (for that job's progress and host list).

// Token kinds.
const (
	// KindUser is a person's token; its role is RoleUser or RoleAdmin.
	KindUser = "user"
	// KindJoin lets an agent register a new node, once per node name.
	KindJoin = "join"
	// KindNode is a node's credential, issued at registration.
	KindNode = "node"
)

// Roles of user tokens.
const (
	RoleUser  = "user"
	RoleAdmin = "admin"
)

// Limits on tokens.
const (
	// MaxTokenTTLS is the longest lifetime of a token, in seconds (10
	// years); 0 means no expiry.
	MaxTokenTTLS = 10 * 365 * 24 * 3600
	// MaxNameBytes bounds user and node names.
	MaxNameBytes = 64
)

// TokenRequest asks for a new token: POST /v1/tokens (admins only).
type TokenRequest struct {
	// User names the person a user token is for; required unless Join.
	User string `json:"user,omitempty"`
	// Role is "user" (the default) or "admin".
	Role string `json:"role,omitempty"`
	// Join asks for a join token instead (agents register with it).
	Join bool `json:"join,omitempty"`
	// TTLS is the token's lifetime in seconds; 0: it never expires.
	TTLS int64 `json:"ttl_s,omitempty"`
}

// Validate reports the first problem with r as a *FieldError.
func (r *TokenRequest) Validate() error {
	if r.TTLS < 0 || r.TTLS > MaxTokenTTLS {
		return fieldErr("ttl_s", "%d: want 0 (no expiry) or 1..%d seconds", r.TTLS, MaxTokenTTLS)
	}
	if r.Join {
		if r.User != "" || r.Role != "" {
			return fieldErr("join", "a join token has no user or role")
		}
		return nil
	}
	if err := CheckName(r.User); err != nil {
		return fieldErr("user", "%v", err)
	}
	if r.Role != "" && r.Role != RoleUser && r.Role != RoleAdmin {
		return fieldErr("role", "%q: want user or admin", r.Role)
	}
	return nil
}

// DecodeTokenRequest reads and validates a TokenRequest (strictly, like
// DecodeSpec).
func DecodeTokenRequest(data []byte) (TokenRequest, error) {
	var r TokenRequest
	if err := decodeStrict(data, &r); err != nil {
		return TokenRequest{}, err
	}
	if err := r.Validate(); err != nil {
		return TokenRequest{}, err
	}
	if !r.Join && r.Role == "" {
		r.Role = RoleUser
	}
	return r, nil
}

// CheckName reports whether s is a valid user name: 1–64 bytes of
// letters, digits, '.', '_', '-' or '@'.
func CheckName(s string) error {
	switch {
	case s == "":
		return &FieldError{Message: "empty: want a name such as alice"}
	case len(s) > MaxNameBytes:
		return &FieldError{Message: "longer than 64 bytes"}
	}
	if i := strings.IndexFunc(s, func(r rune) bool {
		return r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-@", r))
	}); i >= 0 {
		return &FieldError{Message: "only letters, digits, '.', '_', '-' and '@' are allowed"}
	}
	return nil
}

// TokenCreated answers POST /v1/tokens: the token itself, shown this once
// (the server keeps only its hash).
type TokenCreated struct {
	Token string `json:"token"`
	TokenInfo
}

// TokenInfo describes a token without its secret: GET /v1/tokens.
type TokenInfo struct {
	// ID identifies the token (it is part of the token): revoke it by ID.
	ID   string `json:"id"`
	Kind string `json:"kind"`
	User string `json:"user,omitempty"`
	Role string `json:"role,omitempty"`
	// Node is the node a node credential belongs to.
	Node      string     `json:"node,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy string     `json:"created_by,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// TokenList answers GET /v1/tokens.
type TokenList struct {
	Tokens []TokenInfo `json:"tokens"`
}

// Identity answers GET /v1/whoami: who the request's token is.
type Identity struct {
	Kind string `json:"kind"`
	User string `json:"user,omitempty"`
	Role string `json:"role,omitempty"`
	Node string `json:"node,omitempty"`
	Job  string `json:"job,omitempty"`
	// TokenID is the token's ID (empty without authentication).
	TokenID string `json:"token_id,omitempty"`
	// Queues are the queues the user may submit to (users listed in the
	// queue configuration, or every queue that lists none).
	Queues []string `json:"queues,omitempty"`
}

// AuditEntry is one recorded mutation: who did what, when, with what
// result. GET /v1/audit (admins only).
type AuditEntry struct {
	Time time.Time `json:"time"`
	// Who is the caller, e.g. "user alice", "admin root", "node gpu7",
	// "anonymous" (without authentication).
	Who string `json:"who"`
	// Action is the request, e.g. "POST /v1/jobs".
	Action string `json:"action"`
	// Target is what it acted on: a job, token or node.
	Target string `json:"target,omitempty"`
	// Status is the HTTP status of the answer.
	Status int `json:"status"`
}

// AuditList answers GET /v1/audit, newest last.
type AuditList struct {
	Entries []AuditEntry `json:"entries"`
}
