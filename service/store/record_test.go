package store

import (
	"bytes"
	"strings"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	cases := []struct {
		name    string
		rec     record
		wantLen int
	}{
		{"small", record{createRev: 1, modRev: 1, value: []byte("v")}, 4},
		{"empty value", record{createRev: 7, modRev: 9, value: []byte{}}, 3},
		{"large revisions", record{createRev: 1 << 40, modRev: 1<<62 + 5, value: []byte("x")}, 1 + 6 + 9 + 1},
		{"max revision", record{createRev: 1, modRev: 1<<63 - 1, value: nil}, 1 + 1 + 9},
	}
	for _, c := range cases {
		b := encodeRecord(c.rec)
		if len(b) != c.wantLen {
			t.Errorf("%s: %d bytes, want %d", c.name, len(b), c.wantLen)
		}
		got, err := decodeRecord(b)
		if err != nil || got.createRev != c.rec.createRev || got.modRev != c.rec.modRev || !bytes.Equal(got.value, c.rec.value) {
			t.Errorf("%s: decoded %+v, %v; want %+v", c.name, got, err, c.rec)
		}
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "empty"},
		{"unknown version", []byte{2, 1, 0}, "unknown version"},
		{"truncated create", []byte{1}, "bad create"},
		{"overlong create", append([]byte{1}, bytes.Repeat([]byte{0xff}, 11)...), "bad create"},
		{"truncated mod", []byte{1, 1}, "bad mod"},
		{"zero create", []byte{1, 0, 0}, "out of range"},
		{"mod overflows", []byte{1, 2, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "out of range"},
	}
	for _, c := range cases {
		_, err := decodeRecord(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestDecodeRev(t *testing.T) {
	cases := []struct {
		in      []byte
		want    int64
		wantErr bool
	}{
		{encodeRev(0), 0, false},
		{encodeRev(123456789), 123456789, false},
		{[]byte{1, 2, 3}, 0, true},
		{[]byte{0x80, 0, 0, 0, 0, 0, 0, 0}, 0, true},
	}
	for _, c := range cases {
		got, err := decodeRev(c.in)
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("decodeRev(%x) = %d, %v", c.in, got, err)
		}
	}
}

// FuzzDecodeRecord: the decoder never panics, accepts only sane revisions,
// and what it accepts encodes back to something that decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(record{createRev: 1, modRev: 1, value: []byte(`{"gpus":4}`)}))
	f.Add(encodeRecord(record{createRev: 1 << 40, modRev: 1<<63 - 1}))
	f.Add([]byte{})
	f.Add([]byte{1, 0x80, 0x80, 0x80})
	f.Add([]byte{2, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := decodeRecord(b)
		if err != nil {
			return
		}
		if rec.createRev < 1 || rec.modRev < rec.createRev {
			t.Fatalf("accepted revisions create %d mod %d", rec.createRev, rec.modRev)
		}
		again, err := decodeRecord(encodeRecord(rec))
		if err != nil || again.createRev != rec.createRev || again.modRev != rec.modRev || !bytes.Equal(again.value, rec.value) {
			t.Fatalf("round trip of %+v gave %+v, %v", rec, again, err)
		}
	})
}
