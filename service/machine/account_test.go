package machine

import "testing"

func TestSecretEnv(t *testing.T) {
	for kv, want := range map[string]bool{
		"GPUSCHED_TOKEN=x": true, "GPUSCHED_JOIN_TOKEN=x": true, "HF_TOKEN=x": true, "AWS_SECRET_ACCESS_KEY=x": true,
		"DB_PASSWORD=x": true, "SSH_AUTH_SOCK=/tmp/s": true, "GPUSCHED_CONFIG=/root/c.yaml": true,
		"GPUSCHED_REDFISH_PASSWORD=x": true, "PATH=/bin": false, "LANG=C": false, "CUDA_HOME=/usr/local/cuda": false,
	} {
		if SecretEnv(kv) != want {
			t.Errorf("SecretEnv(%s) = %v, want %v", kv, !want, want)
		}
	}
}
