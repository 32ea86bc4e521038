package report

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
)

// SummariesFile is the file of a comparison with every run's summary, one
// JSON object per line.
const SummariesFile = "summaries.json"

// comparisonOutputs are the files of a report of several runs: each run's
// files in its subdirectory, and the comparison.
func comparisonOutputs(title string, runs []Run) ([]output, error) {
	seen := map[string]string{}
	var outputs []output
	for _, r := range runs {
		sub := RunDir(r.Name)
		if other, dup := seen[sub]; dup {
			return nil, fmt.Errorf("runs %q and %q would share the directory %s", other, r.Name, sub)
		}
		seen[sub] = r.Name
		single := []Run{r}
		for _, o := range runOutputs(r) {
			outputs = append(outputs, output{path.Join(sub, o.name), o.write})
		}
		outputs = append(outputs, output{path.Join(sub, IndexFile), func(w io.Writer) error {
			return HTML(w, title+": "+r.Name, single)
		}})
	}
	outputs = append(outputs,
		output{IndexFile, func(w io.Writer) error { return HTML(w, title, runs) }},
		output{SummariesFile, func(w io.Writer) error {
			var b bytes.Buffer
			for _, r := range runs {
				if err := JSON(&b, r.Summary); err != nil {
					return err
				}
			}
			_, err := w.Write(b.Bytes())
			return err
		}})
	return outputs, nil
}

// RunDir is the subdirectory of a run in a comparison: its name with every
// character other than an ASCII letter, digit, '.', '-', '+' or '_'
// replaced by '_' ("run" for an empty name; "." and ".." are prefixed).
func RunDir(name string) string {
	var b strings.Builder
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-+_", c)
		if !ok {
			c = '_'
		}
		b.WriteRune(c)
	}
	s := b.String()
	switch s {
	case "":
		return "run"
	case ".", "..":
		return "_" + s
	}
	return s
}
