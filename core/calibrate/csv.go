package calibrate

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// DefaultType is the algorithm type of samples whose file has no type column
// or an empty type cell.
const DefaultType = "default"

// Column names of the CSV header.
const (
	colLoad       = "load"
	colPower      = "power_w"
	colThroughput = "throughput"
	colType       = "type"
)

// columns maps the header's column names to field indexes; typ is -1 when
// the file has no type column.
type columns struct {
	load, power, throughput, typ int
	n                            int
}

// ParseCSV reads calibration samples in CSV (see the package documentation)
// and returns them by algorithm type, each type's samples in file order.
// name is the file name used in errors, which have the form NAME:LINE: ....
func ParseCSV(name string, r io.Reader) (map[string][]Sample, error) {
	br := bufio.NewReader(r)
	if bom, _ := br.Peek(3); string(bom) == "\ufeff" { // a UTF-8 byte order mark
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	rec, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty file: want a header line such as %q", name, "load,power_w,throughput")
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	line, _ := cr.FieldPos(0)
	cols, err := parseHeader(rec)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line, err)
	}
	out := map[string][]Sample{}
	lastLine := map[string]int{} // the line of each type's previous sample
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		typ, s, err := cols.sample(rec)
		if err == nil {
			err = checkOrder(typ, s, out[typ], lastLine[typ])
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out[typ] = append(out[typ], s)
		lastLine[typ] = line
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no samples after the header", name)
	}
	return out, nil
}

// csvError turns an error of the CSV reader into one of the form NAME:LINE:.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %w", name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// parseHeader finds the columns in the header record rec.
func parseHeader(rec []string) (columns, error) {
	cols := columns{load: -1, power: -1, throughput: -1, typ: -1, n: len(rec)}
	idx := map[string]*int{colLoad: &cols.load, colPower: &cols.power, colThroughput: &cols.throughput, colType: &cols.typ}
	for i, f := range rec {
		key := strings.ToLower(strings.TrimSpace(f))
		p, ok := idx[key]
		switch {
		case !ok:
			return cols, fmt.Errorf("header: unknown column %q: want load, power_w, throughput and optionally type", f)
		case *p >= 0:
			return cols, fmt.Errorf("header: column %q appears twice", key)
		}
		*p = i
	}
	var missing []string
	for _, c := range []string{colLoad, colPower, colThroughput} {
		if *idx[c] < 0 {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return cols, fmt.Errorf("header: missing column %s: want load, power_w, throughput and optionally type", strings.Join(missing, ", "))
	}
	return cols, nil
}

// sample parses one data record into its algorithm type and sample.
func (c columns) sample(rec []string) (string, Sample, error) {
	if len(rec) != c.n {
		return "", Sample{}, fmt.Errorf("%d fields, but the header has %d columns", len(rec), c.n)
	}
	var s Sample
	for _, f := range []struct {
		col string
		i   int
		v   *float64
	}{{colLoad, c.load, &s.Load}, {colPower, c.power, &s.PowerW}, {colThroughput, c.throughput, &s.Throughput}} {
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[f.i]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return "", Sample{}, fmt.Errorf("column %s: %q is not a finite number", f.col, rec[f.i])
		}
		*f.v = v
	}
	if col, problem := checkSample(s); problem != "" {
		return "", Sample{}, fmt.Errorf("column %s: %s", col, problem)
	}
	typ := DefaultType
	if c.typ >= 0 {
		if t := strings.TrimSpace(rec[c.typ]); t != "" {
			typ = t
		}
	}
	return typ, s, nil
}

// checkOrder reports whether s may follow the samples prev of type typ, the
// last of which is on line prevLine: loads must increase strictly.
func checkOrder(typ string, s Sample, prev []Sample, prevLine int) error {
	if len(prev) == 0 {
		return nil
	}
	last := prev[len(prev)-1].Load
	switch {
	case s.Load == last:
		return fmt.Errorf("column load: duplicate load %v for type %q (line %d has it too): loads must increase strictly within a type", s.Load, typ, prevLine)
	case s.Load < last:
		return fmt.Errorf("column load: load %v for type %q is below %v on line %d: loads must increase within a type", s.Load, typ, last, prevLine)
	}
	return nil
}
