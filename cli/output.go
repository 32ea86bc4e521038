package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/gpusched/gpusched/service/api"
)

// Output formats of the client commands (-o).
const (
	outTable = "table"
	outJSON  = "json"
	outYAML  = "yaml"
	// outWide is the table with more columns, where a command has them
	// (nodes); elsewhere the table.
	outWide = "wide"
)

// outputFormat is the -o/--output flag: table, json or yaml, and wide
// where a command has a wide table (wide). A bad value is a flag error
// (exit 2).
type outputFormat struct {
	v    *string
	wide bool
}

func (f outputFormat) String() string {
	if f.v == nil {
		return outTable
	}
	return *f.v
}

func (f outputFormat) Set(s string) error {
	switch s {
	case outTable, outJSON, outYAML:
		*f.v = s
		return nil
	case outWide:
		if f.wide {
			*f.v = s
			return nil
		}
	}
	if f.wide {
		return fmt.Errorf("%q: want table, wide, json or yaml", s)
	}
	return fmt.Errorf("%q: want table, json or yaml", s)
}

func (outputFormat) Type() string { return "format" }

// writeValue prints v as indented JSON or as YAML (with the JSON field
// names; times in RFC 3339).
func writeValue(w io.Writer, format string, v any) error {
	if format == outYAML {
		data, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode YAML: %w", err)
		}
		_, err = w.Write(data)
		return err
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	if err := e.Encode(v); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	return nil
}

// newTable returns a tabwriter for aligned columns.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 8, 2, ' ', 0) }

// writeJobsTable prints one line per job; times are relative to now.
func writeJobsTable(w io.Writer, jobs []api.Job, now time.Time) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tGPUS\tALLOC\tSUBMITTED")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cell(j.ID), cell(j.Name), stateText(j),
			gpusText(j), compactAlloc(j.Alloc), ago(j.SubmittedAt, now))
	}
	return tw.Flush()
}

// writeNodesTable prints one line per node; times are relative to now.
func writeNodesTable(w io.Writer, nodes []api.Node, now time.Time) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tSTATE\tGPUS\tUSED\tTYPE\tLAST-HEARTBEAT")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", cell(n.Name), cell(string(n.State)), len(n.GPUs),
			n.GPUsUsed, gpuTypes(n.GPUs), ago(n.LastHeartbeat, now))
	}
	return tw.Flush()
}

// writeJobDetail prints one job as "Key: value" lines and its events, with
// times in RFC 3339 (and relative to now).
func writeJobDetail(w io.Writer, j api.Job, now time.Time) error {
	tw := newTable(w)
	line := func(key, value string) { fmt.Fprintf(tw, "%s:\t%s\n", key, value) }
	optional := func(key, value string) {
		if value != "" {
			line(key, cell(value))
		}
	}
	line("ID", cell(j.ID))
	line("Name", cell(j.Name))
	optional("User", j.User)
	line("State", stateText(j))
	optional("Reason", j.Reason)
	line("GPUs", gpusDetail(j))
	if len(j.Requests) > 0 {
		line("Per GPU", cell(requestsText(j.Requests)))
	}
	line("Alloc", compactAlloc(j.Alloc))
	optional("Model", j.Model)
	line("Priority", strconv.Itoa(j.Priority))
	line("Command", cell(quoteArgs(j.Command)))
	optional("Workdir", j.Workdir)
	for _, k := range slices.Sorted(maps.Keys(j.Env)) {
		line("Env", cell(k+"="+j.Env[k]))
	}
	line("Grace period", fmt.Sprintf("%ds", j.GracePeriodS))
	line("Exit code", exitText(j.ExitCode))
	line("Attempt", strconv.Itoa(j.Attempt))
	if j.ProgressAt != nil {
		line("Progress", fmt.Sprintf("step %d, reported %s", j.Steps, stamp(j.ProgressAt, now)))
	}
	if j.LastCheckpointAt != nil {
		line("Checkpoint", fmt.Sprintf("step %d, reported %s", j.CheckpointSteps, stamp(j.LastCheckpointAt, now)))
	}
	if j.EnergyKWh > 0 {
		line("Energy", kWhText(j.EnergyKWh))
	}
	line("Submitted", stamp(&j.SubmittedAt, now))
	line("Started", stamp(j.StartedAt, now))
	line("Finished", stamp(j.FinishedAt, now))
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(j.Events) == 0 {
		return nil
	}
	fmt.Fprintln(w, "Events:")
	tw = newTable(w)
	fmt.Fprintln(tw, "  TIME\tEVENT\tMESSAGE")
	for _, e := range j.Events {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Time.Format(time.RFC3339), cell(e.Event), cell(e.Message))
	}
	return tw.Flush()
}

// requestsText writes a job's requests as NAME=AMOUNT,... by name.
func requestsText(r map[string]string) string {
	parts := make([]string, 0, len(r))
	for _, k := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, k+"="+r[k])
	}
	return strings.Join(parts, ",")
}

// kWhText writes an energy with at least three significant digits:
// "12.346 kWh", "0.0123 kWh".
func kWhText(kwh float64) string {
	prec := 3
	if a := math.Abs(kwh); a > 0 {
		prec = min(max(3, 2-int(math.Floor(math.Log10(a)))), 9)
	}
	return strconv.FormatFloat(kwh, 'f', prec, 64) + " kWh"
}

// stateText is the state, with the exit code of a failed job.
func stateText(j api.Job) string {
	if j.State == api.Failed && j.ExitCode != nil {
		return fmt.Sprintf("failed(%d)", *j.ExitCode)
	}
	return cell(string(j.State))
}

// gpusText is the requested GPU count, with the bounds of an elastic job:
// "4" or "4 (2-8)".
func gpusText(j api.Job) string {
	if j.MinGPUs == j.MaxGPUs && (j.MinGPUs == j.GPUsRequested || j.MinGPUs == 0) {
		return strconv.Itoa(j.GPUsRequested)
	}
	return fmt.Sprintf("%d (%d-%d)", j.GPUsRequested, j.MinGPUs, j.MaxGPUs)
}

// gpusDetail is gpusText with the GPU type restriction.
func gpusDetail(j api.Job) string {
	s := gpusText(j)
	if j.GPUType != "" {
		s += ", type " + cell(j.GPUType)
	}
	return s
}

func exitText(code *int) string {
	if code == nil {
		return "-"
	}
	return strconv.Itoa(*code)
}

// stamp is t in RFC 3339 and relative to now, or "-".
func stamp(t *time.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339) + " (" + ago(*t, now) + ")"
}

// ago says how long before now t was: "45s ago", "3m ago", "2h5m ago",
// "3d4h ago"; "-" for the zero time. A t after now (clock skew) is "0s ago".
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := max(now.Sub(t), 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return withUnit(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "m") + " ago"
	}
	return withUnit(int(d/(24*time.Hour)), "d", int(d%(24*time.Hour)/time.Hour), "h") + " ago"
}

// withUnit writes "2h5m", or "2h" when the second part is 0.
func withUnit(a int, ua string, b int, ub string) string {
	if b == 0 {
		return fmt.Sprintf("%d%s", a, ua)
	}
	return fmt.Sprintf("%d%s%d%s", a, ua, b, ub)
}

// compactAlloc shortens an allocation to runs of consecutive GPUs of a
// node: [n0/0 n0/1 n0/2 n0/4 n1/3] is "n0/0-2,n0/4,n1/3"; "-" when empty.
// Entries that are not node/index stay as they are.
func compactAlloc(alloc []string) string {
	if len(alloc) == 0 {
		return "-"
	}
	var parts []string
	for i := 0; i < len(alloc); {
		node, first, ok := splitGPU(alloc[i])
		i++
		if !ok {
			parts = append(parts, cell(alloc[i-1]))
			continue
		}
		last := first
		for ; i < len(alloc); i++ {
			if n, x, ok := splitGPU(alloc[i]); !ok || n != node || x != last+1 {
				break
			}
			last++
		}
		parts = append(parts, cell(node)+"/"+indexRange(first, last))
	}
	return strings.Join(parts, ",")
}

// splitGPU splits "node/index".
func splitGPU(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, '/')
	if i <= 0 {
		return "", 0, false
	}
	x, err := strconv.Atoi(s[i+1:])
	if err != nil || x < 0 {
		return "", 0, false
	}
	return s[:i], x, true
}

func indexRange(first, last int) string {
	if first == last {
		return strconv.Itoa(first)
	}
	return fmt.Sprintf("%d-%d", first, last)
}

// gpuTypes summarises a node's GPUs: "v100" when all are alike, else
// counts per type in order of appearance ("v100=2,k80=2"); "-" for none.
func gpuTypes(gpus []api.GPU) string {
	if len(gpus) == 0 {
		return "-"
	}
	var order []string
	count := map[string]int{}
	for _, g := range gpus {
		t := g.Type
		if t == "" {
			t = "?"
		}
		if count[t] == 0 {
			order = append(order, t)
		}
		count[t]++
	}
	if len(order) == 1 {
		return cell(order[0])
	}
	parts := make([]string, len(order))
	for i, t := range order {
		parts[i] = fmt.Sprintf("%s=%d", cell(t), count[t])
	}
	return strings.Join(parts, ",")
}

// quoteArgs writes argv as a shell would need it typed.
func quoteArgs(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := func(r rune) bool {
		return r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_@%+=:,./-", r))
	}
	if !strings.ContainsFunc(s, func(r rune) bool { return !safe(r) }) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// cell makes server-provided text safe for a table cell and a terminal:
// control characters (tabs, escapes) become '?', empty text "-".
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}
