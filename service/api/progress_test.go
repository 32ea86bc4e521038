package api_test

import (
	"errors"
	"testing"

	"github.com/gpusched/gpusched/service/api"
)

func TestDecodeProgress(t *testing.T) {
	good := []struct {
		in   string
		want api.Progress
	}{
		{`{"steps":0}`, api.Progress{}},
		{`{"steps":120,"checkpoint":true}`, api.Progress{Steps: 120, Checkpoint: true}},
		{` {"checkpoint":false,"steps":7} `, api.Progress{Steps: 7}},
	}
	for _, tc := range good {
		got, err := api.DecodeProgress([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("DecodeProgress(%s) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	bad := []struct{ in, field string }{
		{`{}`, "steps"},
		{`{"checkpoint":true}`, "steps"},
		{`{"steps":-1}`, "steps"},
		{`{"steps":"10"}`, "steps"},
		{`{"steps":1.5}`, "steps"},
		{`{"steps":1,"step":2}`, "step"},
		{`{"steps":1,"Steps":2}`, "Steps"},
		{`{"steps":1,"checkpoint":1}`, "checkpoint"},
		{`{"steps":1} {}`, ""},
		{``, ""},
		{`[1]`, "(body)"},
	}
	for _, tc := range bad {
		_, err := api.DecodeProgress([]byte(tc.in))
		var fe *api.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("DecodeProgress(%s): error %v, want a FieldError naming %q", tc.in, err, tc.field)
		}
	}
}
