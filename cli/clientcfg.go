package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/gpusched/gpusched/service/client"
)

// envConfig names another client config file than the default
// (<user config dir>/gpusched/config.yaml).
const envConfig = "GPUSCHED_CONFIG"

// clientConfig is the client's config file, ~/.config/gpusched/config.yaml
// on Linux (gpusched login writes it, mode 0600): the server, the token and
// the CA certificate to trust. Flags win over the environment
// ($GPUSCHED_SERVER, $GPUSCHED_TOKEN, $GPUSCHED_CA), which wins over it.
type clientConfig struct {
	Server string `json:"server,omitempty"`
	Token  string `json:"token,omitempty"`
	CA     string `json:"ca,omitempty"`
}

// clientConfigPath returns the config file's path: $GPUSCHED_CONFIG, else
// the default.
func clientConfigPath(getenv func(string) string) (string, error) {
	if p := getenv(envConfig); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory (%v): set $%s", err, envConfig)
	}
	return filepath.Join(dir, "gpusched", "config.yaml"), nil
}

// loadClientConfig reads the config file; a missing file is an empty
// config, a malformed one bad input naming it.
func loadClientConfig(getenv func(string) string) (clientConfig, error) {
	var cfg clientConfig
	path, err := clientConfigPath(getenv)
	if err != nil {
		return cfg, nil // no config directory: nothing to read
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, badInput("client config: %w", err)
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return cfg, badInput("client config %s: %s", path, strings.TrimPrefix(err.Error(), "error unmarshaling JSON: "))
	}
	return cfg, nil
}

// getenv returns a getenv that falls back to the config file's server.
func (c clientConfig) getenv(getenv func(string) string) func(string) string {
	return func(k string) string {
		if v := getenv(k); v != "" || k != client.EnvServer {
			return v
		}
		return c.Server
	}
}

// addCredentialFlags adds --token and --ca.
func (o *clientOptions) addCredentialFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.token, "token", "", "bearer token (default $"+client.EnvToken+", else the config file's: gpusched login)")
	f.StringVar(&o.ca, "ca", "", "CA certificate to trust, e.g. a self-signed server's DATA/tls/ca.crt (default $"+client.EnvCA+", else the config file's)")
}

// credentials resolves the token and CA: flag, environment, config file.
func (o *clientOptions) credentials(cfg clientConfig) client.Options {
	return client.Options{Token: first(o.token, os.Getenv(client.EnvToken), cfg.Token),
		CAFile: first(o.ca, os.Getenv(client.EnvCA), cfg.CA)}
}

// first returns the first non-empty string.
func first(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// saveClientConfig writes the config file (mode 0600, atomically).
func saveClientConfig(path string, cfg clientConfig) error {
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".config.yaml.tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
