package calibrate

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseCSV(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string][]Sample
	}{
		{"plain", "load,power_w,throughput\n0,60,0\n0.5,150,600\n1,300,1200\n",
			map[string][]Sample{DefaultType: {{0, 60, 0}, {0.5, 150, 600}, {1, 300, 1200}}}},
		{"any column order, types, comments, blanks, spaces, CRLF",
			"\ufeff# a comment\r\n\r\n Throughput , type,LOAD,power_w\r\n600, a ,0.5,150\r\n10,b,0.1,20\r\n# more\r\n1200,a,1,300\r\n",
			map[string][]Sample{"a": {{0.5, 150, 600}, {1, 300, 1200}}, "b": {{0.1, 20, 10}}}},
		{"empty type cell is the default type", "type,load,power_w,throughput\n,0.5,1,2\n\"x,y\",0.5,1,2\n",
			map[string][]Sample{DefaultType: {{0.5, 1, 2}}, "x,y": {{0.5, 1, 2}}}},
		{"types interleaved", "type,load,power_w,throughput\na,0.1,1,1\nb,0.1,1,1\na,0.2,1,2\nb,0.3,1,3\n",
			map[string][]Sample{"a": {{0.1, 1, 1}, {0.2, 1, 2}}, "b": {{0.1, 1, 1}, {0.3, 1, 3}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCSV("s.csv", strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseCSVErrors(t *testing.T) {
	const h = "load,power_w,throughput\n"
	tests := []struct{ name, in, want string }{
		{"empty", "", "s.csv: empty file: want a header line"},
		{"comments only", "# nothing\n", "s.csv: empty file"},
		{"header only", h, "s.csv: no samples after the header"},
		{"missing column", "load,throughput\n0.5,1\n", `s.csv:1: header: missing column power_w`},
		{"missing columns", "# c\ntype\na\n", `s.csv:2: header: missing column load, power_w, throughput`},
		{"unknown column", "load,power,throughput\n", `s.csv:1: header: unknown column "power"`},
		{"column twice", "load,power_w,throughput,load\n", `s.csv:1: header: column "load" appears twice`},
		{"field count", h + "0.5,1\n", "s.csv:2: 2 fields, but the header has 3 columns"},
		{"not a number", h + "0.5,abc,1\n", `s.csv:2: column power_w: "abc" is not a finite number`},
		{"empty number", h + "0.5,,1\n", `s.csv:2: column power_w: "" is not a finite number`},
		{"NaN", h + "NaN,1,1\n", `s.csv:2: column load: "NaN" is not a finite number`},
		{"infinite", h + "0.5,1,inf\n", `s.csv:2: column throughput: "inf" is not a finite number`},
		{"load above 1", h + "0.1,1,1\n50,1,1\n", "s.csv:3: column load: 50 is outside [0,1] (loads are fractions of full load)"},
		{"negative power", h + "0.1,-3,1\n", "s.csv:2: column power_w: -3 is negative"},
		{"zero throughput", h + "0.1,3,0\n", "s.csv:2: column throughput: 0 at load 0.1: a positive load must do work"},
		{"negative throughput", h + "0,3,-1\n", "s.csv:2: column throughput: -1 is negative"},
		{"unsorted", h + "0.1,1,1\n0.3,1,1\n\n0.2,1,1\n", `s.csv:5: column load: load 0.2 for type "default" is below 0.3 on line 3: loads must increase within a type`},
		{"duplicate", h + "0.1,1,1\n0.3,1,1\n0.3,2,2\n", `s.csv:4: column load: duplicate load 0.3 for type "default" (line 3 has it too)`},
		{"duplicate within a type", "type,load,power_w,throughput\na,0.3,1,1\nb,0.3,1,1\na,0.3,1,1\n", `s.csv:4: column load: duplicate load 0.3 for type "a" (line 2 has it too)`},
		{"bad quoting", h + "0.1,1,1\n0.2,\"1,1\n", "s.csv:3: extraneous or missing \" in quoted-field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCSV("s.csv", strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error, got %v", got)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

// FuzzParseCSV: ParseCSV never panics; what it accepts is valid, sorted,
// survives a round trip through CSV, and Fit never panics on it.
func FuzzParseCSV(f *testing.F) {
	var ramp bytes.Buffer
	writeRampFile(&ramp)
	f.Add(ramp.Bytes())
	f.Add([]byte("load,power_w,throughput\n0,60,0\n0.5,150,600\n1,300,1200\n"))
	f.Add([]byte("type,load,power_w,throughput\na,0.1,1,1\nb,0.1,1,1\n\"x\"\"y\",0.2,1e-300,1e300\n"))
	f.Add([]byte("load,power_w,throughput\n0.1,1,1\n0.1,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		byType, err := ParseCSV("f.csv", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv:") {
				t.Fatalf("error %q does not start with the file name", err)
			}
			return
		}
		if len(byType) == 0 {
			t.Fatal("no error and no samples")
		}
		for typ, samples := range byType {
			checkParsed(t, typ, samples)
		}
		again, err := ParseCSV("again.csv", bytes.NewReader(formatCSV(byType)))
		if err != nil || !reflect.DeepEqual(again, byType) {
			t.Fatalf("round trip: %v\n%v\n%v", err, again, byType)
		}
		for _, samples := range byType {
			th, err := Fit(samples, Options{})
			if err == nil && !(samples[0].Load <= th.Th1 && th.Th1 < th.Th2 && th.Th2 <= samples[len(samples)-1].Load) {
				t.Fatalf("thresholds %+v outside the ramp's loads or out of order", th)
			}
		}
	})
}

// checkParsed checks that samples are valid and strictly increasing in load.
func checkParsed(t *testing.T, typ string, samples []Sample) {
	t.Helper()
	if typ == "" || len(samples) == 0 {
		t.Fatalf("type %q with %d samples", typ, len(samples))
	}
	for i, s := range samples {
		if col, problem := checkSample(s); problem != "" {
			t.Fatalf("type %q sample %d: accepted bad %s: %s", typ, i, col, problem)
		}
		if i > 0 && !(s.Load > samples[i-1].Load) {
			t.Fatalf("type %q: loads not increasing at sample %d", typ, i)
		}
	}
}

// formatCSV writes samples by type as CSV with a type column.
func formatCSV(byType map[string][]Sample) []byte {
	var b bytes.Buffer
	b.WriteString("type,load,power_w,throughput\n")
	for typ, samples := range byType {
		q := `"` + strings.ReplaceAll(typ, `"`, `""`) + `"`
		for _, s := range samples {
			fmt.Fprintf(&b, "%s,%v,%v,%v\n", q, s.Load, s.PowerW, s.Throughput)
		}
	}
	return b.Bytes()
}

// TestFormatCSVExact: %v prints float64 in the shortest form that parses back
// to the same value, which the fuzz round trip relies on.
func TestFormatCSVExact(t *testing.T) {
	in := map[string][]Sample{"t": {{math.Nextafter(0.1, 1), 1e-300, 5e-324}, {1, math.MaxFloat64, 1}}}
	got, err := ParseCSV("x.csv", bytes.NewReader(formatCSV(in)))
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Fatalf("%v %v", got, err)
	}
}
