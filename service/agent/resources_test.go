package agent

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

func TestCapacityConfig(t *testing.T) {
	gpus := []api.GPU{{Index: 0, Type: "v100"}}
	for capa, want := range map[string]model.Resources{"pods": {"pods": 1}, "negative": {"cpu": -1}, "a b": {"a b": 1}} {
		_, err := New(Config{Server: "http://h:1", Name: "a", GPUs: gpus, DataDir: t.TempDir(), Capacity: want})
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "capacity") {
			t.Errorf("%s: New = %v, want ErrInvalidConfig about the capacity", capa, err)
		}
	}
}

// TestRegistersCapacity: the registration carries the node's capacity as
// quantities.
func TestRegistersCapacity(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t, "", true)
	startAgent(t, f.srv.URL, "", func(c *Config) {
		c.Capacity = model.Resources{"cpu": 6000, "memory": 16 << 30, "rdma/hca": 2}
	})
	want := map[string]string{"cpu": "6", "memory": "16Gi", "rdma/hca": "2"}
	waitFor(t, "a registration with the capacity", func() bool {
		var got map[string]string
		f.with(func(f *fakeServer) { got = f.capacity })
		return reflect.DeepEqual(got, want)
	})
}
