package api_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/gpusched/gpusched/service/api"
)

// The fuzz targets of the API's other decoders (issue 18): what a client
// or an agent can send — progress reports, token requests, and the agent
// protocol's messages, which the server decodes with api.Decode. Each must
// never panic, must reject with a *api.FieldError, and must accept only
// what survives a JSON round trip.

// wantFieldError fails t unless err is a *api.FieldError with a message.
func wantFieldError(t *testing.T, err error) {
	t.Helper()
	fe, ok := errors.AsType[*api.FieldError](err)
	if !ok || fe.Message == "" {
		t.Fatalf("error %#v is not a *api.FieldError with a message", err)
	}
}

// roundTrip re-encodes v and decodes it again with decode, wanting v back.
func roundTrip[T any](t *testing.T, v T, decode func([]byte) (T, error)) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %+v: %v", v, err)
	}
	again, err := decode(data)
	if err != nil {
		t.Fatalf("re-decode %s: %v", data, err)
	}
	if !reflect.DeepEqual(again, v) {
		t.Fatalf("round trip changed the value:\n was %+v\n now %+v", v, again)
	}
}

func FuzzDecodeProgress(f *testing.F) {
	for _, s := range []string{`{"steps":10}`, `{"steps":10,"checkpoint":true}`, `{"steps":-1}`, `{}`, `{"steps":"1"}`,
		`{"steps":1,"steps":2}`, `{"STEPS":1}`, `{"steps":1e30}`, `[]`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := api.DecodeProgress(data)
		if err != nil {
			wantFieldError(t, err)
			return
		}
		if p.Validate() != nil {
			t.Fatalf("accepted an invalid report %+v", p)
		}
		roundTrip(t, p, api.DecodeProgress)
	})
}

func FuzzDecodeTokenRequest(f *testing.F) {
	for _, s := range []string{`{"user":"alice"}`, `{"user":"root","role":"admin","ttl_s":3600}`, `{"join":true}`,
		`{"join":true,"user":"x"}`, `{"user":""}`, `{"user":"a b"}`, `{"user":"x","role":"root"}`, `{"user":"x","ttl_s":-1}`,
		`{"user":"é"}`, `{"user":"x","ttl_s":1e20}`, `null`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := api.DecodeTokenRequest(data)
		if err != nil {
			wantFieldError(t, err)
			return
		}
		if r.Validate() != nil || (!r.Join && r.Role == "") {
			t.Fatalf("accepted an invalid request %+v", r)
		}
		roundTrip(t, r, api.DecodeTokenRequest)
	})
}

// decodeAs decodes data into a fresh T with api.Decode.
func decodeAs[T any](data []byte) (T, error) {
	var v T
	err := api.Decode(data, &v)
	return v, err
}

// FuzzDecodeAgent decodes the agent protocol's messages (registration,
// status report, log chunk) from one input.
func FuzzDecodeAgent(f *testing.F) {
	for _, s := range []string{
		`{"name":"n1","addr":"n1","gpus":[{"index":0,"type":"v100","mem_mib":16384}]}`,
		`{"name":"n1","gpus":[{"index":0,"type":"v100"}],"capacity":{"cpu":"62","memory":"500Gi","rdma/hca":"4"}}`,
		`{"name":"n1","gpus":[{"index":0,"type":"v100"}],"capacity":{"cpu":2}}`,
		`{"replicas":[{"id":"j1.1.0","job":"j1","phase":"running","exit_code":0,"started_at":"2026-01-01T00:00:00Z"}],"version":3}`,
		`{"replica":"j1.1.0","job":"j1","offset":0,"data":"aGVsbG8="}`,
		`{"replica":"j1.1.0","job":"j1","offset":-1,"data":"!!"}`,
		`{"name":"n1","gpus":"all"}`, `{"replicas":null}`, `{"power":{"load":2}}`, `{"x":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := decodeAs[api.Register](data); err != nil {
			wantFieldError(t, err)
		} else if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
		if s, err := decodeAs[api.Status](data); err != nil {
			wantFieldError(t, err)
		} else if _, err := json.Marshal(s); err != nil {
			t.Fatal(err)
		}
		if c, err := decodeAs[api.LogChunk](data); err != nil {
			wantFieldError(t, err)
		} else {
			roundTrip(t, c, decodeAs[api.LogChunk])
		}
	})
}
