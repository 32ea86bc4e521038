package scheduler

import (
	"fmt"

	"github.com/gpusched/gpusched/core/recipe"
)

// Check reports whether New would refuse c for its configuration (an error
// wrapping ErrConfig), without opening a store: a server checks its flags
// before it contacts etcd.
func (c Config) Check() error {
	c, err := c.withDefaults()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if _, err := recipe.New(c.Names, *c.Options); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}
