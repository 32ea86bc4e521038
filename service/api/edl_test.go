package api_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/service/api"
)

func TestDecodeEDL(t *testing.T) {
	cases := []struct {
		name, body, field string
		decode            func([]byte) error
	}{
		{"master ok", `{"holder":"j1.1.0","addr":"n1:1","ttl_s":10}`, "", master},
		{"master release without ttl", `{"holder":"a","release":true}`, "", master},
		{"master without holder", `{"ttl_s":10}`, "holder", master},
		{"master ttl zero", `{"holder":"a"}`, "ttl_s", master},
		{"master ttl too long", `{"holder":"a","ttl_s":1e9}`, "ttl_s", master},
		{"master unknown field", `{"holder":"a","ttl_s":1,"lock":true}`, "lock", master},
		{"queue ok", `{"tasks":["a","b"],"passes":2}`, "", queue},
		{"queue empty", `{"tasks":[]}`, "tasks", queue},
		{"queue negative passes", `{"tasks":["a"],"passes":-1}`, "passes", queue},
		{"queue task too long", `{"tasks":["` + strings.Repeat("x", api.MaxTaskBytes+1) + `"]}`, "tasks", queue},
		{"lease ok", `{"holder":"t","done":{"index":3,"lease":"ab"}}`, "", lease},
		{"lease done without lease", `{"holder":"t","done":{"index":3}}`, "done", lease},
		{"report without lease", `{}`, "lease", report},
		{"claim ok", `{"holder":"p","desired":2,"ttl_s":5}`, "", claim},
		{"claim without desired", `{"holder":"p","ttl_s":5}`, "desired", claim},
		{"claim release", `{"holder":"p","desired":2,"release":true}`, "release", claim},
	}
	for _, c := range cases {
		err := c.decode([]byte(c.body))
		var fe *api.FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.field)
		}
	}
	s, _ := api.DecodeTaskQueueSpec([]byte(`{"tasks":["a"]}`))
	if s.Passes != 1 || s.MaxFailures != 3 || s.TTLS != 60 {
		t.Errorf("queue defaults: %+v", s)
	}
}

func master(b []byte) error { _, err := api.DecodeMasterRequest(b); return err }
func queue(b []byte) error  { _, err := api.DecodeTaskQueueSpec(b); return err }
func lease(b []byte) error  { _, err := api.DecodeLeaseRequest(b); return err }
func report(b []byte) error { _, err := api.DecodeTaskReport(b); return err }
func claim(b []byte) error  { _, err := api.DecodePServerClaim(b, true); return err }

// FuzzDecodeEDL: the EDL decoders never panic and fail only with a
// *api.FieldError.
func FuzzDecodeEDL(f *testing.F) {
	for _, s := range []string{`{"holder":"a","ttl_s":1}`, `{"tasks":["a"]}`, `{"holder":"t","done":{"index":1,"lease":"x"}}`,
		`{"lease":"x"}`, `{"holder":"p","desired":2,"ttl_s":1}`, `{`, `null`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, decode := range []func([]byte) error{master, queue, lease, report, claim} {
			if err := decode(data); err != nil {
				var fe *api.FieldError
				if !errors.As(err, &fe) || fe.Message == "" {
					t.Fatalf("%q: error %#v is not a *api.FieldError with a message", data, err)
				}
			}
		}
	})
}
