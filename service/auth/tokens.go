package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// Store keys.
const (
	tokenPrefix = "auth/tokens/"
	nodePrefix  = "auth/nodes/"
	secretKey   = "auth/secret"
	// bootstrapKey is claimed by the server of several that wrote the
	// bootstrap admin token (its value: that token file's path).
	bootstrapKey = "auth/bootstrap"
)

// Errors of Verify, Revoke and CreateNode; test with errors.Is.
var (
	// ErrUnauthenticated: the token is missing, malformed, unknown,
	// revoked or expired (HTTP 401).
	ErrUnauthenticated = errors.New("authentication required")
	// ErrNotFound: no token with that ID.
	ErrNotFound = errors.New("no such token")
	// ErrNodeTaken: the node already has a credential (another agent may
	// not register under its name with a join token).
	ErrNodeTaken = errors.New("node already has a credential")
)

// Identity is who a request's token stands for. Its zero value is the
// anonymous caller of a server without authentication, who may do
// everything.
type Identity struct {
	// Kind is KindUser, KindJoin, KindNode or KindJob; empty for the
	// anonymous caller of a server without authentication, who may do
	// everything.
	Kind string
	User string
	Role string // api.RoleUser or api.RoleAdmin, for KindUser
	Node string // for KindNode
	Job  string // for KindJob
	// TokenID is the token's ID (the job's ID for a job token).
	TokenID string
}

// Admin reports whether id may do everything: an admin's token, or no
// authentication at all.
func (id Identity) Admin() bool {
	return id.Kind == "" || (id.Kind == KindUser && id.Role == api.RoleAdmin)
}

// String names the caller for messages and the audit log: "admin root",
// "user alice", "node gpu7", "join token 3f…", "job j7", "anonymous".
func (id Identity) String() string {
	switch id.Kind {
	case "":
		return "anonymous"
	case KindUser:
		return id.Role + " " + id.User
	case KindNode:
		return "node " + id.Node
	case KindJoin:
		return "join token " + id.TokenID
	case KindJob:
		return "job " + id.Job
	}
	return id.Kind
}

// record is a token as the store keeps it: its description and its hash.
type record struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	User      string     `json:"user,omitempty"`
	Role      string     `json:"role,omitempty"`
	Node      string     `json:"node,omitempty"`
	Hash      string     `json:"hash"`
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy string     `json:"created_by,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Bootstrap bool       `json:"bootstrap,omitempty"`
}

func (r *record) info() api.TokenInfo {
	return api.TokenInfo{ID: r.ID, Kind: r.Kind, User: r.User, Role: r.Role, Node: r.Node,
		CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy, ExpiresAt: r.ExpiresAt}
}

// Tokens keeps the tokens in a store. Safe for concurrent use.
type Tokens struct {
	st  store.Store
	now func() time.Time

	mu     sync.Mutex
	secret []byte // the job tokens' HMAC key, loaded once
}

// NewTokens returns the tokens of st; now is the clock (nil: time.Now).
func NewTokens(st store.Store, now func() time.Time) *Tokens {
	if now == nil {
		now = time.Now
	}
	return &Tokens{st: st, now: now}
}

// Create makes a user's token or a join token as req asks (by names the
// admin who asks) and returns it, the only time it is shown.
func (t *Tokens) Create(ctx context.Context, req api.TokenRequest, by string) (api.TokenCreated, error) {
	if err := req.Validate(); err != nil {
		return api.TokenCreated{}, err
	}
	r := record{Kind: KindUser, User: req.User, Role: req.Role, CreatedBy: by}
	if req.Join {
		r = record{Kind: KindJoin, CreatedBy: by}
	} else if r.Role == "" {
		r.Role = api.RoleUser
	}
	if req.TTLS > 0 {
		exp := t.now().Add(time.Duration(req.TTLS) * time.Second).UTC()
		r.ExpiresAt = &exp
	}
	tok, err := t.put(ctx, &r)
	if err != nil {
		return api.TokenCreated{}, err
	}
	return api.TokenCreated{Token: tok, TokenInfo: r.info()}, nil
}

// put stores a new token for r (filling its ID, hash and time) and returns
// the token; extra ops join the same transaction.
func (t *Tokens) put(ctx context.Context, r *record, extra ...store.Op) (string, error) {
	tok, id, err := newToken(kindLetter(r.Kind))
	if err != nil {
		return "", err
	}
	r.ID, r.Hash, r.CreatedAt = id, hashToken(tok), t.now().UTC()
	data, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encode token: %w", err)
	}
	ops := append([]store.Op{store.IfAbsent(tokenPrefix + id), store.OpPut(tokenPrefix+id, data)}, extra...)
	if _, err := t.st.Txn(ctx, ops...); err != nil {
		return "", fmt.Errorf("store token: %w", err)
	}
	return tok, nil
}

// CreateNode issues node's credential, unless the node has one
// (ErrNodeTaken): a name is claimed once, until an admin revokes its
// credential. The credential and the claim on the name are written in one
// transaction.
func (t *Tokens) CreateNode(ctx context.Context, node, by string) (string, error) {
	tok, id, err := newToken(kindNode)
	if err != nil {
		return "", err
	}
	r := record{ID: id, Kind: KindNode, Node: node, CreatedBy: by, Hash: hashToken(tok), CreatedAt: t.now().UTC()}
	data, err := json.Marshal(&r)
	if err != nil {
		return "", fmt.Errorf("encode token: %w", err)
	}
	_, err = t.st.Txn(ctx, store.IfAbsent(tokenPrefix+id), store.IfAbsent(nodePrefix+node),
		store.OpPut(tokenPrefix+id, data), store.OpPut(nodePrefix+node, []byte(id)))
	if errors.Is(err, store.ErrCompareFailed) {
		return "", fmt.Errorf("%w: node %q", ErrNodeTaken, node)
	}
	if err != nil {
		return "", fmt.Errorf("store node credential: %w", err)
	}
	return tok, nil
}

// Verify returns the identity of tok. A missing, malformed, unknown,
// revoked or expired token is ErrUnauthenticated, with the reason.
func (t *Tokens) Verify(ctx context.Context, tok string) (Identity, error) {
	if tok == "" {
		return Identity{}, fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	}
	p, err := parse(tok)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	if p.kind == kindJob {
		return t.verifyJob(ctx, p)
	}
	kv, ok, err := t.st.Get(ctx, tokenPrefix+p.id)
	if err != nil {
		return Identity{}, fmt.Errorf("look up token: %w", err)
	}
	var r record
	if ok {
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return Identity{}, fmt.Errorf("token %s: %w", p.id, err)
		}
	}
	if !ok || subtle.ConstantTimeCompare([]byte(r.Hash), []byte(hashToken(tok))) != 1 || kindLetter(r.Kind) != p.kind {
		return Identity{}, fmt.Errorf("%w: unknown or revoked token %s", ErrUnauthenticated, p.id)
	}
	if r.ExpiresAt != nil && !t.now().Before(*r.ExpiresAt) {
		return Identity{}, fmt.Errorf("%w: token %s expired at %s", ErrUnauthenticated, p.id, r.ExpiresAt.Format(time.RFC3339))
	}
	return Identity{Kind: r.Kind, User: r.User, Role: r.Role, Node: r.Node, TokenID: r.ID}, nil
}

// List returns every token's description, sorted by kind, user, node and
// ID.
func (t *Tokens) List(ctx context.Context) ([]api.TokenInfo, error) {
	kvs, _, err := t.st.List(ctx, tokenPrefix)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out := make([]api.TokenInfo, 0, len(kvs))
	for _, kv := range kvs {
		var r record
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return nil, fmt.Errorf("token %s: %w", kv.Key, err)
		}
		out = append(out, r.info())
	}
	slices.SortFunc(out, func(a, b api.TokenInfo) int {
		return strings.Compare(a.Kind+"\x00"+a.User+"\x00"+a.Node+"\x00"+a.ID, b.Kind+"\x00"+b.User+"\x00"+b.Node+"\x00"+b.ID)
	})
	return out, nil
}

// Revoke deletes token id (and frees its node's name for a new join);
// ErrNotFound when there is none.
func (t *Tokens) Revoke(ctx context.Context, id string) (api.TokenInfo, error) {
	if len(id) != idHexLen || !isHex(id) {
		return api.TokenInfo{}, fmt.Errorf("%w: %q (token IDs are %d hex digits, see gpusched token list)", ErrNotFound, id, idHexLen)
	}
	kv, ok, err := t.st.Get(ctx, tokenPrefix+id)
	if err != nil {
		return api.TokenInfo{}, fmt.Errorf("look up token: %w", err)
	}
	if !ok {
		return api.TokenInfo{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	var r record
	if err := json.Unmarshal(kv.Value, &r); err != nil {
		return api.TokenInfo{}, fmt.Errorf("token %s: %w", id, err)
	}
	ops := []store.Op{store.IfModRev(kv.Key, kv.ModRev), store.OpDelete(kv.Key)}
	if r.Kind == KindNode {
		ops = append(ops, store.OpDelete(nodePrefix+r.Node))
	}
	if _, err := t.st.Txn(ctx, ops...); err != nil {
		return api.TokenInfo{}, fmt.Errorf("revoke token %s: %w", id, err)
	}
	return r.info(), nil
}

// Bootstrap makes sure an admin can get in: unless path (DATA/admin.token)
// exists, it revokes the previous bootstrap token, creates a new admin
// token for user "admin" and writes it to path (mode 0600, atomically). It
// reports whether it wrote one.
func (t *Tokens) Bootstrap(ctx context.Context, path string) (bool, error) {
	if _, err := os.Stat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("bootstrap token %s: %w", path, err)
	}
	kvs, _, err := t.st.List(ctx, tokenPrefix)
	if err != nil {
		return false, fmt.Errorf("list tokens: %w", err)
	}
	for _, kv := range kvs {
		var r record
		if json.Unmarshal(kv.Value, &r) == nil && r.Bootstrap {
			if _, err := t.st.Delete(ctx, kv.Key); err != nil {
				return false, fmt.Errorf("revoke the old bootstrap token: %w", err)
			}
		}
	}
	r := record{Kind: KindUser, User: "admin", Role: api.RoleAdmin, CreatedBy: "bootstrap", Bootstrap: true}
	tok, err := t.put(ctx, &r)
	if err != nil {
		return false, err
	}
	if err := writeSecret(path, []byte(tok+"\n")); err != nil {
		_, _ = t.st.Delete(ctx, tokenPrefix+r.ID)
		return false, fmt.Errorf("bootstrap token %s: %w", path, err)
	}
	return true, nil
}

// BootstrapShared is Bootstrap for several servers sharing one store
// (docs/SERVER.md, "Several servers"): exactly one server of the cluster —
// the first to claim the store's bootstrap key, in one transaction with the
// token — writes the bootstrap admin token to its path and reports true;
// the others leave the token alone, so that the first server's file keeps
// working. A token file already at path is kept too.
func (t *Tokens) BootstrapShared(ctx context.Context, path string) (bool, error) {
	if _, err := os.Stat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("bootstrap token %s: %w", path, err)
	}
	r := record{Kind: KindUser, User: "admin", Role: api.RoleAdmin, CreatedBy: "bootstrap", Bootstrap: true}
	claim := []store.Op{store.IfAbsent(bootstrapKey), store.OpPut(bootstrapKey, []byte(path))}
	tok, err := t.put(ctx, &r, claim...)
	if errors.Is(err, store.ErrCompareFailed) {
		return false, nil // another server of the cluster bootstrapped it
	}
	if err != nil {
		return false, err
	}
	if err := writeSecret(path, []byte(tok+"\n")); err != nil {
		_, _ = t.st.Txn(ctx, store.OpDelete(tokenPrefix+r.ID), store.OpDelete(bootstrapKey))
		return false, fmt.Errorf("bootstrap token %s: %w", path, err)
	}
	return true, nil
}

// writeSecret writes data to path with mode 0600, atomically and durably.
func writeSecret(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// JobToken returns the token of job id (its progress reports and host
// list; valid while the job is active, which the caller checks).
func (t *Tokens) JobToken(ctx context.Context, job string) (string, error) {
	key, err := t.jobKey(ctx)
	if err != nil {
		return "", err
	}
	return prefix + string(kindJob) + "_" + job + "_" + jobMAC(key, job), nil
}

func jobMAC(key []byte, job string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("gpusched job token\x00" + job))
	return hex.EncodeToString(m.Sum(nil))
}

// verifyJob checks a job token's MAC.
func (t *Tokens) verifyJob(ctx context.Context, p parsed) (Identity, error) {
	key, err := t.jobKey(ctx)
	if err != nil {
		return Identity{}, err
	}
	if !hmac.Equal([]byte(jobMAC(key, p.id)), []byte(p.secret)) {
		return Identity{}, fmt.Errorf("%w: invalid job token for %s", ErrUnauthenticated, p.id)
	}
	return Identity{Kind: KindJob, Job: p.id, TokenID: p.id}, nil
}

// jobKey returns the HMAC key of job tokens, creating it on first use.
func (t *Tokens) jobKey(ctx context.Context) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.secret != nil {
		return t.secret, nil
	}
	kv, ok, err := t.st.Get(ctx, secretKey)
	if err != nil {
		return nil, fmt.Errorf("job token key: %w", err)
	}
	if !ok {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("job token key: %w", err)
		}
		_, err := t.st.Txn(ctx, store.IfAbsent(secretKey), store.OpPut(secretKey, []byte(hex.EncodeToString(b[:]))))
		if err != nil && !errors.Is(err, store.ErrCompareFailed) {
			return nil, fmt.Errorf("job token key: %w", err)
		}
		if kv, ok, err = t.st.Get(ctx, secretKey); err != nil || !ok {
			return nil, fmt.Errorf("job token key: %v", err)
		}
	}
	key, err := hex.DecodeString(string(kv.Value))
	if err != nil || len(key) < 16 {
		return nil, fmt.Errorf("job token key in %s is corrupt", secretKey)
	}
	t.secret = key
	return key, nil
}
