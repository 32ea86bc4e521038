package api

import (
	"bytes"
	_ "embed" // for go:embed
)

//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI returns the OpenAPI 3 document of the REST API and the agent
// protocol (api/openapi.yaml), as the server serves it at /openapi.yaml.
// The caller may modify the returned bytes.
func OpenAPI() []byte { return bytes.Clone(openapiYAML) }
