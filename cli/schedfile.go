package cli

import (
	"os"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/recipe"
)

// applySchedFile reads the --config file path (docs/CONFIG.md), applies
// its settings to names and opts where the command line did not set them
// (given), and returns it: a missing file is bad input, a malformed one a
// usage error naming the file and line.
func applySchedFile(path string, names *recipe.Names, opts *recipe.Options, given func(string) bool) (*config.SchedFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("--config: %w", err)
	}
	f, err := config.ParseSchedFile(path, data)
	if err != nil {
		return nil, usageError{err}
	}
	f.Apply(names, opts, given)
	return f, nil
}
