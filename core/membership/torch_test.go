package membership

import (
	"maps"
	"testing"
)

// TestTorchElastic: an elastic job's settings rendezvous at its master and
// port, hosted by node rank 0; a rigid job gets none.
func TestTorchElastic(t *testing.T) {
	want := map[string]string{"PET_RDZV_BACKEND": "c10d", "PET_RDZV_ENDPOINT": "[fe80::1]:29500", "PET_RDZV_ID": "j7",
		"PET_NNODES": "1:8", "PET_MAX_RESTARTS": "100", "PET_RDZV_CONF": "last_call_timeout=3,is_host=1", "PET_MONITOR_INTERVAL": "1"}
	if got := TorchElastic("j7", 29500, 2, 8, "fe80::1", true); !maps.Equal(got, want) {
		t.Errorf("rank 0: %v, want %v", got, want)
	}
	if got := TorchElastic("j7", 29500, 2, 8, "n1", false); got["PET_RDZV_CONF"] != "last_call_timeout=3,is_host=0" ||
		got["PET_RDZV_ENDPOINT"] != "n1:29500" {
		t.Errorf("another rank: %v", got)
	}
	if got := TorchElastic("j7", 29500, 4, 4, "n1", true); got != nil {
		t.Errorf("a rigid job: %v, want none", got)
	}
}
