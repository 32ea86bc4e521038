package settings

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/core/recipe"
)

func TestWithDefaults(t *testing.T) {
	c, err := Config{DataDir: "/data"}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	def := recipe.Defaults()
	if c.Names != def || c.Options == nil || c.HeartbeatInterval != DefaultHeartbeatInterval ||
		c.HeartbeatTimeout != DefaultHeartbeatTimeout || c.Round != DefaultRound || c.Coalesce != DefaultCoalesce ||
		c.PortBase != DefaultPortBase || c.PortRange != DefaultPortRange || c.Logger == nil || c.Clock == nil ||
		c.Registerer == nil || c.Gatherer == nil || c.PowerSampleEvery <= 0 {
		t.Errorf("defaults %+v", c)
	}
	if StorePath("/data") != "/data/store.db" {
		t.Errorf("StorePath = %q", StorePath("/data"))
	}
}

// TestCheck: every refusal of a configuration wraps ErrConfig and says
// what is wrong.
func TestCheck(t *testing.T) {
	if err := (Config{DataDir: "/data"}).Check(); err != nil {
		t.Fatalf("Check of the defaults = %v", err)
	}
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"no data directory", Config{}, "a data directory is required"},
		{"srtf", Config{DataDir: "/d", Names: recipe.Names{Policy: "srtf"}}, "policy srtf needs"},
		{"unknown policy", Config{DataDir: "/d", Names: recipe.Names{Policy: "nope"}}, "nope"},
		{"heartbeat", Config{DataDir: "/d", HeartbeatInterval: 5 * time.Second, HeartbeatTimeout: time.Second},
			"heartbeat timeout 1s must exceed the heartbeat interval 5s"},
		{"ports", Config{DataDir: "/d", PortBase: 65000, PortRange: 1000}, "MASTER_PORT range 65000+1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Check()
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want an ErrConfig with %q", err, tc.want)
			}
		})
	}
}
