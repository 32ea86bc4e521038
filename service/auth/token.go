package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Token prefixes by kind.
const (
	prefix     = "gps_"
	kindUser   = 'u'
	kindJoin   = 'j'
	kindNode   = 'n'
	kindJob    = 'b'
	idHexLen   = 16
	secretLen  = 43 // base64url (no padding) of 32 bytes
	maxToken   = 512
	hashPrefix = "sha256:"
)

// ErrMalformed means a string is not a gpusched token at all.
var ErrMalformed = errors.New("not a gpusched token (want gps_<kind>_<id>_<secret>)")

// parsed is a token split into its parts.
type parsed struct {
	kind   byte
	id     string // hex ID (u, j, n) or the job ID (b)
	secret string // secret (u, j, n) or MAC (b)
}

// parse splits a token; ErrMalformed when it is not one.
func parse(tok string) (parsed, error) {
	if len(tok) > maxToken || !strings.HasPrefix(tok, prefix) || len(tok) < len(prefix)+2 {
		return parsed{}, ErrMalformed
	}
	rest := tok[len(prefix):]
	kind := rest[0]
	if rest[1] != '_' {
		return parsed{}, ErrMalformed
	}
	rest = rest[2:]
	var p parsed
	switch kind {
	case kindUser, kindJoin, kindNode: // the secret may hold '_': the ID has a fixed length
		if len(rest) != idHexLen+1+secretLen || rest[idHexLen] != '_' {
			return parsed{}, ErrMalformed
		}
		p = parsed{kind: kind, id: rest[:idHexLen], secret: rest[idHexLen+1:]}
		if !isHex(p.id) || !isB64(p.secret) {
			return parsed{}, ErrMalformed
		}
	case kindJob: // the MAC is hex
		i := strings.LastIndexByte(rest, '_')
		if i <= 0 {
			return parsed{}, ErrMalformed
		}
		p = parsed{kind: kind, id: rest[:i], secret: rest[i+1:]}
		if len(p.secret) != 64 || !isHex(p.secret) || !validJobID(p.id) {
			return parsed{}, ErrMalformed
		}
	default:
		return parsed{}, ErrMalformed
	}
	return p, nil
}

// validJobID accepts the service's job IDs ("j" and digits).
func validJobID(s string) bool {
	if len(s) < 2 || len(s) > 24 || s[0] != 'j' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isB64(s string) bool {
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// newToken returns a fresh token of kind and its ID.
func newToken(kind byte) (tok, id string, err error) {
	var idb [idHexLen / 2]byte
	var sec [32]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return "", "", fmt.Errorf("new token: %w", err)
	}
	if _, err := rand.Read(sec[:]); err != nil {
		return "", "", fmt.Errorf("new token: %w", err)
	}
	id = hex.EncodeToString(idb[:])
	return prefix + string(kind) + "_" + id + "_" + base64.RawURLEncoding.EncodeToString(sec[:]), id, nil
}

// hashToken returns the stored form of a token: "sha256:<hex>".
func hashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hashPrefix + hex.EncodeToString(h[:])
}

// kindLetter maps api kinds to token letters and back.
func kindLetter(kind string) byte {
	switch kind {
	case KindJoin:
		return kindJoin
	case KindNode:
		return kindNode
	}
	return kindUser
}

// Token kinds (the api package's names).
const (
	KindUser = "user"
	KindJoin = "join"
	KindNode = "node"
	KindJob  = "job"
)
