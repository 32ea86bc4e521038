package api

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestOpenAPIDocument checks that the embedded document is OpenAPI 3 YAML
// with a schema for every wire type, and that OpenAPI hands out copies.
func TestOpenAPIDocument(t *testing.T) {
	var doc struct {
		OpenAPI    string `json:"openapi"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := yaml.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %q, want 3.x", doc.OpenAPI)
	}
	for _, name := range []string{"JobSpec", "Job", "JobEvent", "JobList", "Error", "GPU", "Node", "NodeList",
		"Register", "RegisterReply", "Status", "ReplicaStatus", "Work", "Replica", "LogChunk", "LogAck",
		"Progress", "ReplicaProgress", "PowerReading", "GPUPower", "ProfileEntry", "ProfileList", "Quantity", "Resources"} {
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("no schema %s", name)
		}
	}
	a := OpenAPI()
	a[0] = 'X'
	if OpenAPI()[0] == 'X' {
		t.Error("OpenAPI returned the embedded bytes, not a copy")
	}
}
