package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpusched/gpusched/service/api"
)

// credentialFile is where the agent keeps its node's credential, in its
// data directory (mode 0600).
const credentialFile = "node.token"

// registerAuth registers the node with the right token (docs/SECURITY.md):
// the node's credential when it has one (Config.Credential, else
// DataDir/node.token); otherwise the join token, keeping the credential the
// server answers with. A credential the server no longer knows (401: an
// admin revoked it, or the server's store is new) is dropped, and the node
// joins again with the join token when it has one. Without either, it
// registers without a token (a server without authentication).
func (a *Agent) registerAuth(ctx context.Context, reg api.Register) (api.RegisterReply, error) {
	if cred := a.credential(); cred != "" {
		a.api.setToken(cred)
		reply, err := a.api.register(ctx, reg)
		if httpCode(err) != http.StatusUnauthorized || a.cfg.JoinToken == "" {
			return reply, err
		}
		a.log.Warn("the server does not know this node's credential any more; joining again with the join token", "err", err)
		if err := os.Remove(a.credentialPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return reply, fmt.Errorf("drop the old credential: %w", err)
		}
		a.cfg.Credential = ""
	}
	a.api.setToken(a.cfg.JoinToken)
	reply, err := a.api.register(ctx, reg)
	if err != nil {
		return reply, err
	}
	if reply.Credential != "" {
		if err := writeFileAtomic(a.credentialPath(), []byte(reply.Credential+"\n"), 0o600); err != nil {
			return reply, fmt.Errorf("keep the node's credential: %w", err)
		}
		a.api.setToken(reply.Credential)
		a.log.Info("joined the cluster; the node's credential is in " + a.credentialPath())
	}
	return reply, nil
}

// credential returns the node's credential: Config.Credential, else the
// one in the data directory, else "".
func (a *Agent) credential() string {
	if a.cfg.Credential != "" {
		return a.cfg.Credential
	}
	data, err := os.ReadFile(a.credentialPath())
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

func (a *Agent) credentialPath() string { return filepath.Join(a.cfg.DataDir, credentialFile) }
