package audit

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/eventlog"
)

// sameAsUnmarshal requires decode to give what json.Unmarshal gives for b:
// the same error text, or the same event.
func sameAsUnmarshal(t *testing.T, b []byte) {
	t.Helper()
	var want, got rawEvent
	werr := json.Unmarshal(b, &want)
	gerr := decode(b, &got)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("%q: error %v, json.Unmarshal's %v", b, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decoded %+v, json.Unmarshal %+v", b, got, want)
	}
}

// randomEvent is an event of a random kind in the writer's form.
func randomEvent(r *rand.Rand) eventlog.Event {
	kinds := []eventlog.Kind{eventlog.Submit, eventlog.Start, eventlog.Resize, eventlog.Preempt,
		eventlog.Finish, eventlog.Reject, eventlog.Pause, eventlog.Unfinished}
	names := []string{"j1", "job-7", "a b", "ü", "x<y", `q"`, `back\slash`, "tab\t", "0"}
	e := eventlog.Event{T: model.Time(r.Int63n(1 << 40)), Kind: kinds[r.Intn(len(kinds))], Job: names[r.Intn(len(names))]}
	switch e.Kind {
	case eventlog.Submit:
		q := &eventlog.Request{GPUs: 1 + r.Intn(8), MinGPUs: r.Intn(3), MaxGPUs: r.Intn(16), Steps: r.Int63n(3) * 1000,
			Duration: model.Time(r.Int63n(3) * 12345), Priority: r.Intn(3) - 1, ReplicaGPUs: r.Intn(3)}
		if r.Intn(2) == 0 {
			q.Model, q.GPUType = "resnet50", names[r.Intn(len(names))]
		}
		if r.Intn(4) == 0 {
			q.Requests = map[string]int64{"cpu": r.Int63n(9000)}
		}
		e.Request = q
	case eventlog.Start, eventlog.Resize:
		for n := r.Intn(4); n > 0; n-- {
			e.Alloc = append(e.Alloc, names[r.Intn(len(names))])
		}
	default:
		if r.Intn(2) == 0 {
			e.Reason = names[r.Intn(len(names))]
		}
	}
	return e
}

// mutate changes a few bytes of b.
func mutate(r *rand.Rand, b []byte) []byte {
	const alphabet = `{}[]",:0123456789-+.eE tTaAnulx\` + "\n\xff"
	keys := []string{`"t"`, `"T"`, `"event"`, `"alloc"`, `"gpus"`, `"min_gpus"`, `"nodes"`, `"requests"`, `"steps"`,
		`null`, `1e400`, `-0`, `01`, `1.`, `1.5`, `9223372036854775808`, `[]`, `""`, `\u0041`, `true`}
	b = append([]byte(nil), b...)
	for n := 1 + r.Intn(3); n > 0; n-- {
		i := r.Intn(len(b) + 1)
		switch r.Intn(4) {
		case 0:
			if i < len(b) {
				b[i] = alphabet[r.Intn(len(alphabet))]
			}
		case 1:
			if i < len(b) {
				b = append(b[:i], b[i+1:]...)
			}
		case 2:
			b = append(b[:i], append([]byte{alphabet[r.Intn(len(alphabet))]}, b[i:]...)...)
		default:
			b = append(b[:i], append([]byte(keys[r.Intn(len(keys))]), b[i:]...)...)
		}
	}
	return b
}

// TestDecodeIsUnmarshal compares decode with json.Unmarshal on seeded
// random events in the writer's form and on mutations of them, and
// requires both decode's own path and the fallback to have run.
func TestDecodeIsUnmarshal(t *testing.T) {
	r := rand.New(rand.NewSource(29))
	fast, slow := 0, 0
	for range 20000 {
		b := eventlog.Append(nil, randomEvent(r))
		if r.Intn(2) == 0 {
			b = mutate(r, b)
		}
		sameAsUnmarshal(t, b)
		if decodeFast(b, &rawEvent{}) {
			fast++
		} else {
			slow++
		}
	}
	if fast < 2000 || slow < 2000 {
		t.Fatalf("decoded %d lines itself and handed %d to json.Unmarshal; want both ≥ 2000", fast, slow)
	}
}

// TestDecodeHandCases compares decode with json.Unmarshal on lines that
// sit on the edge of what decode reads itself.
func TestDecodeHandCases(t *testing.T) {
	lines := []string{
		`{}`, `{"t":0}`, `{"t":1.5e3,"event":"start","job":"a","alloc":[]}`, `{"t":1,"event":"start","alloc":["a","b"]}`,
		`{"t":1,"t":2}`, `{"T":1}`, `{"t":null}`, `{"t":"1"}`, `{"t":1e400}`, `{"t":-0}`, `{"t":01}`, `{"t":1.}`,
		`{"t":.5}`, `{"t":1e}`, `{"t":1E+2}`, `{"t":1,"gpus":4}`, `{"t":1,"gpus":4.5}`, `{"t":1,"gpus":[]}`,
		`{"t":1,"min_gpus":2.0}`, `{"t":1,"min_gpus":-3}`, `{"t":1,"max_gpus":9223372036854775808}`,
		`{"t":1,"replica_gpus":2}`, `{"t":1,"steps":1.5}`, `{"t":1,"steps":"x"}`, `{"t":1,"priority":-1}`,
		`{"t":1,"model":"m"}`, `{"t":1,"model":5}`, `{"t":1,"other":5}`, `{"t":1,"job":"a\"b"}`,
		`{"t":1,"job":"\u0041"}`, "{\"t\":1,\"job\":\"\xff\"}", `{"t":1,"job":"ü"}`, `{ "t":1}`, `{"t":1} `,
		`{"t":1,}`, `{"t":1`, `{"t":1,"alloc":["a",]}`, `{"t":1,"alloc":["a" ]}`, `{"t":1,"alloc":null}`,
		`{"t":1,"alloc":[1]}`, `{"t":1,"requests":{"cpu":1}}`, `{"t":1,"nodes":[]}`, `[1]`, `{"t":1}}`, `{`, `}`,
		`{"event":"x","event":"y"}`, `{"t":1,"reason":""}`, `{"t":1,"job":"a","job":"a"}`,
	}
	for _, l := range lines {
		sameAsUnmarshal(t, []byte(l))
	}
	for _, raw := range []string{"4", "-2", "0", "01", "4.0", "1e2", "9223372036854775808", `"4"`, "null", " 4"} {
		var want int
		werr := json.Unmarshal([]byte(raw), &want)
		got, gerr := rawInt(json.RawMessage(raw))
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) || got != want {
			t.Fatalf("rawInt(%s) = %d, %v; json.Unmarshal %d, %v", raw, got, gerr, want, werr)
		}
	}
}

// FuzzDecode compares decode with json.Unmarshal on arbitrary lines.
func FuzzDecode(f *testing.F) {
	for _, l := range strings.Split(validLog, "\n") {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameAsUnmarshal(t, b) })
}
