package audit

import (
	"encoding/json"
	"strconv"
)

// decode reads one line into e exactly as json.Unmarshal(b, e) does: the
// same event, the same error. It decodes lines in the form the simulator
// writes (eventlog.Append) itself and hands every other line, whatever
// looks unusual in it, to json.Unmarshal. What it decodes itself is a
// strict subset of JSON whose meaning it shares with json.Unmarshal: one
// object with no whitespace, each key at most once and one of fastKeys,
// written in lower case; strings of printable ASCII without escapes;
// numbers in JSON's grammar that parse without a range error, integers
// without a fraction or an exponent where the field is an int; alloc an
// array of such strings, gpus a number. (Unmarshal would also match keys
// case-insensitively, replace invalid UTF-8, accept null and whitespace:
// all of that goes to it.)
func decode(b []byte, e *rawEvent) error {
	if !decodeFast(b, e) {
		*e = rawEvent{}
		return json.Unmarshal(b, e)
	}
	return nil
}

// fastKeys are the keys decodeFast reads; ignored ones (Unmarshal skips
// them, after checking their syntax) are the submit event's other fields.
var fastKeys = [...]string{"t", "event", "job", "alloc", "gpus", "min_gpus", "max_gpus", "gpu_type",
	"reason", "replica_gpus", "model", "steps", "duration_s", "priority"}

// decodeFast decodes b into e if b is in the subset decode describes and
// reports whether it was; e may be partly set when it was not.
func decodeFast(b []byte, e *rawEvent) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	var seen uint32
	i := 1
	if b[i] == '}' {
		return i == len(b)-1
	}
	for {
		key, j, ok := fastString(b, i)
		if !ok || j >= len(b) || b[j] != ':' {
			return false
		}
		k := keyIndex(key)
		if k < 0 || seen&(1<<k) != 0 {
			return false
		}
		seen |= 1 << k
		if i, ok = fastValue(b, j+1, k, e); !ok || i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return i == len(b)-1
		default:
			return false
		}
	}
}

// keyIndex returns key's index in fastKeys, or -1.
func keyIndex(key []byte) int {
	for k, s := range fastKeys {
		if string(key) == s {
			return k
		}
	}
	return -1
}

// fastValue decodes the value at b[i:] of the key fastKeys[k] into e and
// returns the index after it.
func fastValue(b []byte, i, k int, e *rawEvent) (int, bool) {
	switch fastKeys[k] {
	case "t":
		j, ok := fastNumber(b, i, false)
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(string(b[i:j]), 64)
		if err != nil {
			return 0, false
		}
		e.T = &f
		return j, true
	case "event", "job", "gpu_type", "reason", "model":
		s, j, ok := fastString(b, i)
		if !ok {
			return 0, false
		}
		switch fastKeys[k] {
		case "event":
			e.Event = eventName(s)
		case "job":
			e.Job = string(s)
		case "gpu_type":
			e.GPUType = string(s)
		case "reason":
			e.Reason = string(s)
		}
		return j, true
	case "alloc":
		return fastStrings(b, i, e)
	case "gpus":
		j, ok := fastNumber(b, i, false)
		if ok {
			e.GPUs = append(json.RawMessage(nil), b[i:j]...)
		}
		return j, ok
	case "min_gpus", "max_gpus", "replica_gpus":
		return fastInt(b, i, k, e)
	default: // steps, duration_s, priority: checked, not kept
		return fastNumber(b, i, false)
	}
}

// fastInt decodes an integer for an int field.
func fastInt(b []byte, i, k int, e *rawEvent) (int, bool) {
	j, ok := fastNumber(b, i, true)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b[i:j]), 10, strconv.IntSize)
	if err != nil {
		return 0, false
	}
	v := int(n)
	switch fastKeys[k] {
	case "min_gpus":
		e.MinGPUs = &v
	case "max_gpus":
		e.MaxGPUs = &v
	default:
		e.ReplicaGPUs = &v
	}
	return j, true
}

// eventNames are the event kinds the simulator writes: a read-only lookup
// table (eventName), never written.
var eventNames = [...]string{"submit", "start", "finish", "preempt", "resize", "reject", "pause", "cluster", "unfinished"}

// eventName returns s as a string, one of eventNames without allocating
// where it is one.
func eventName(s []byte) string {
	for _, name := range eventNames {
		if string(s) == name {
			return name
		}
	}
	return string(s)
}

// fastStrings decodes alloc, an array of plain strings.
func fastStrings(b []byte, i int, e *rawEvent) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return 0, false
	}
	i++
	e.Alloc = []string{}
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		s, j, ok := fastString(b, i)
		if !ok || j >= len(b) {
			return 0, false
		}
		e.Alloc = append(e.Alloc, string(s))
		switch b[j] {
		case ',':
			i = j + 1
		case ']':
			return j + 1, true
		default:
			return 0, false
		}
	}
}

// fastString reads a string of printable ASCII without escapes at b[i:]
// and returns its contents and the index after its closing quote.
func fastString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c > 0x7e:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// fastNumber reads a number in JSON's grammar at b[i:] (only -?(0|[1-9]d*)
// with intOnly) and returns the index after it.
func fastNumber(b []byte, i int, intOnly bool) (int, bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		j = digits(b, j)
	default:
		return 0, false
	}
	if intOnly {
		return j, true
	}
	if j < len(b) && b[j] == '.' {
		if k := digits(b, j+1); k > j+1 {
			j = k
		} else {
			return 0, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := digits(b, j)
		if k == j {
			return 0, false
		}
		j = k
	}
	return j, true
}

// digits returns the index after the decimal digits at b[i:].
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// rawInt reads raw into an int exactly as json.Unmarshal(raw, &n) does.
func rawInt(raw json.RawMessage) (int, error) {
	if j, ok := fastNumber(raw, 0, true); ok && j == len(raw) {
		if n, err := strconv.ParseInt(string(raw), 10, strconv.IntSize); err == nil {
			return int(n), nil
		}
	}
	var n int
	err := json.Unmarshal(raw, &n)
	return n, err
}
