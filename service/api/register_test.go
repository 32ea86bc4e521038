package api

import (
	"errors"
	"testing"
)

// TestRegisterCheck: a registration's GPUs come back sorted with
// lower-case types; what is wrong is a *FieldError naming the field.
func TestRegisterCheck(t *testing.T) {
	r := Register{Name: "n1", GPUs: []GPU{{Index: 1, Type: " V100 "}, {Index: 0, Type: "v100"}}, Capacity: map[string]string{"cpu": "8"}}
	gpus, capa, err := r.Check()
	if err != nil || gpus[0].Index != 0 || gpus[1].Type != "v100" || capa["cpu"] != 8000 {
		t.Fatalf("Check = %+v, %v, %v", gpus, capa, err)
	}
	for field, bad := range map[string]Register{
		"name":          {Name: "a:b", GPUs: []GPU{{Type: "v100"}}},
		"addr":          {Name: "n", Addr: "a b", GPUs: []GPU{{Type: "v100"}}},
		"gpus":          {Name: "n", GPUs: []GPU{{Index: 0, Type: "v100"}, {Index: 1, Type: "k80"}}},
		"capacity.pods": {Name: "n", GPUs: []GPU{{Type: "v100"}}, Capacity: map[string]string{"pods": "10"}},
	} {
		var fe *FieldError
		if _, _, err := bad.Check(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want a FieldError about it", field, err)
		}
	}
}
