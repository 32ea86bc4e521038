package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// lines reads a trace line by line, skipping blank lines, and turns field
// problems into *Error values that name the current line.
type lines struct {
	sc   *bufio.Scanner
	name string
	// n is the 1-based number of the current line.
	n int
	// text is the current line without its end-of-line bytes.
	text []byte
	// strs interns repeated column values (intern).
	strs map[string]string
}

// intern returns b as a string, one copy per distinct value (a trace's
// few virtual clusters over many lines).
func (l *lines) intern(b []byte) string {
	if s, ok := l.strs[string(b)]; ok {
		return s
	}
	if l.strs == nil {
		l.strs = map[string]string{}
	}
	s := string(b)
	l.strs[s] = s
	return s
}

// newLines returns a line reader over r; name is the file name for errors.
func newLines(r io.Reader, name string) *lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &lines{sc: sc, name: name}
}

// next advances to the next line that is not blank and reports whether there
// is one. A UTF-8 byte order mark at the start of the file is dropped.
func (l *lines) next() bool {
	for l.sc.Scan() {
		l.n++
		t := l.sc.Bytes()
		if l.n == 1 {
			t = bytes.TrimPrefix(t, []byte("\xef\xbb\xbf"))
		}
		if len(bytes.TrimSpace(t)) == 0 {
			continue
		}
		l.text = t
		return true
	}
	return false
}

// err returns the error that stopped next, if any, as an *Error.
func (l *lines) err() error {
	err := l.sc.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return &Error{File: l.name, Line: l.n + 1, Msg: fmt.Sprintf("line is longer than %d bytes", maxLine)}
	}
	return &Error{File: l.name, Msg: fmt.Sprintf("read after line %d: %v", l.n, err)}
}

// fail returns an *Error about the current line.
func (l *lines) fail(format string, args ...any) *Error {
	return &Error{File: l.name, Line: l.n, Msg: fmt.Sprintf(format, args...)}
}

// header reads the first non-blank line and checks that it is the CSV
// header want (column names compared after trimming spaces).
func (l *lines) header(want string) error {
	if !l.next() {
		if err := l.err(); err != nil {
			return err
		}
		return &Error{File: l.name, Msg: fmt.Sprintf("missing header %q: the trace is empty", want)}
	}
	if !headerIs(l.text, want) {
		return l.fail("missing header: want %q, got %s", want, quote(l.text))
	}
	return nil
}

// headerIs reports whether line is the comma-separated header want, ignoring
// spaces around the column names.
func headerIs(line []byte, want string) bool {
	names := strings.Split(want, ",")
	if bytes.Count(line, []byte{','})+1 != len(names) {
		return false
	}
	for i, col := range bytes.Split(line, []byte{','}) {
		if string(bytes.TrimSpace(col)) != names[i] {
			return false
		}
	}
	return true
}

// fields splits the current line at sep into exactly want fields, reusing
// dst, or fails naming the column count.
func (l *lines) fields(sep byte, want int, dst [][]byte) ([][]byte, error) {
	if n := bytes.Count(l.text, []byte{sep}) + 1; n != want {
		return dst, l.fail("got %d columns, want %d", n, want)
	}
	dst = dst[:0]
	line := l.text
	for {
		i := bytes.IndexByte(line, sep)
		if i < 0 {
			return append(dst, line), nil
		}
		dst = append(dst, line[:i])
		line = line[i+1:]
	}
}

// integer parses column col as a decimal integer in [lo, hi].
func (l *lines) integer(col string, b []byte, lo, hi int64) (int64, error) {
	b = bytes.TrimSpace(b)
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, l.fail("%s %s is not an integer", col, quote(b))
	}
	if v < lo || v > hi {
		return 0, l.fail("%s", checkRange(col, float64(v), float64(lo), float64(hi)))
	}
	return v, nil
}

// number parses column col as a finite decimal number in [lo, hi].
func (l *lines) number(col string, b []byte, lo, hi float64) (float64, error) {
	b = bytes.TrimSpace(b)
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, l.fail("%s %s is not a number", col, quote(b))
	}
	if err := checkRange(col, v, lo, hi); err != "" {
		return 0, l.fail("%s", err)
	}
	return v, nil
}

// gpus parses column col as a GPU count (at least 1).
func (l *lines) gpus(col string, b []byte) (int, error) {
	v, err := l.integer(col, b, 1, maxGPUs)
	return int(v), err
}

// seconds parses column col as a non-negative time in seconds (fractions
// allowed) and converts it to a model.Time.
func (l *lines) seconds(col string, b []byte) (model.Time, error) {
	v, err := l.number(col, b, 0, maxSeconds)
	return model.FromSeconds(v), err
}

// nonEmpty returns column col with surrounding spaces removed, or fails if
// nothing is left.
func (l *lines) nonEmpty(col string, b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "", l.fail("%s is empty", col)
	}
	return string(b), nil
}

// checkRange returns what is wrong with value v of column col, or "" when
// lo <= v <= hi.
func checkRange(col string, v, lo, hi float64) string {
	switch {
	case v < lo && lo == 0:
		return fmt.Sprintf("%s %s is negative", col, fmtNum(v))
	case v < lo:
		return fmt.Sprintf("%s %s is less than %s", col, fmtNum(v), fmtNum(lo))
	case v > hi:
		return fmt.Sprintf("%s %s is too large (at most %s)", col, fmtNum(v), fmtNum(hi))
	}
	return ""
}

// fmtNum formats v for a message: whole numbers without exponent.
func fmtNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// quote returns b as a quoted Go string, cut to 60 bytes so that an error
// about a huge field stays readable.
func quote(b []byte) string {
	const limit = 60
	if len(b) > limit {
		return strconv.Quote(string(b[:limit])) + "…"
	}
	return strconv.Quote(string(b))
}

// readRows reads a delimited trace: the header line when header is not
// empty, then every data line split into n columns by sep, handed to row
// with the line reader (for error positions). It stops at the first error.
func readRows(r io.Reader, name, header string, sep byte, n int, row func(l *lines, cols [][]byte) error) error {
	l := newLines(r, name)
	if header != "" {
		if err := l.header(header); err != nil {
			return err
		}
	}
	var cols [][]byte
	for l.next() {
		var err error
		if cols, err = l.fields(sep, n, cols); err != nil {
			return err
		}
		if err := row(l, cols); err != nil {
			return err
		}
	}
	return l.err()
}

// readSpecs reads a delimited trace whose lines each give one job spec via
// job, and finishes it (sorting, id checks) with the spec's line numbers.
func readSpecs(r io.Reader, name, header string, sep byte, n int, job func(l *lines, cols [][]byte) (model.JobSpec, error)) ([]model.JobSpec, []int, error) {
	var jobs []model.JobSpec
	var at []int
	err := readRows(r, name, header, sep, n, func(l *lines, cols [][]byte) error {
		spec, err := job(l, cols)
		if err != nil {
			return err
		}
		jobs, at = append(jobs, spec), append(at, l.n)
		return nil
	})
	return jobs, at, err
}
