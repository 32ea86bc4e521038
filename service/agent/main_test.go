package agent

import (
	"os"
	"testing"

	"github.com/gpusched/gpusched/service/shim"
)

// TestMain runs the tests, or a replica's shim when the test binary is
// started as one by the agents the tests run (Config.Shim defaults to the
// running program and "shim").
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "shim" {
		os.Exit(shim.Main(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}
