package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/sim/metrics"
)

// Table writes s as an aligned two-column table, one field per line in the
// order of metrics.Summary, ending with a newline. Times are in seconds,
// humanized from one minute up ("avg JCT      12,345.6 s (3h25m)");
// utilisation is a percentage. A map of reasons ("rejected_reasons") is
// written under the count it explains ("rejected"), one indented line per
// reason.
func Table(w io.Writer, s metrics.Summary) error {
	fields := summaryFields(s)
	reasons := map[string]reflect.Value{}
	width := 0
	for _, f := range fields {
		if f.key == resourceUtilKey {
			for _, name := range slices.Sorted(maps.Keys(s.ResourceUtil)) {
				width = max(width, len(resourceLabel(name)))
			}
			continue
		}
		if f.val.Kind() == reflect.Map {
			reasons[strings.TrimSuffix(f.key, "_reasons")] = f.val
			continue
		}
		if vectorOnly(f.key) && f.empty() {
			continue // not written: the other lines keep their alignment
		}
		width = max(width, len(label(f.key)))
	}
	var sb strings.Builder
	for _, f := range fields {
		if f.key == resourceUtilKey {
			for _, name := range slices.Sorted(maps.Keys(s.ResourceUtil)) {
				fmt.Fprintf(&sb, "%-*s  %s\n", width, resourceLabel(name), tableFloat("_util", s.ResourceUtil[name]))
			}
			continue
		}
		if f.val.Kind() == reflect.Map || f.val.Kind() == reflect.Slice || (f.empty() && f.key != "energy_kwh") {
			continue
		}
		fmt.Fprintf(&sb, "%-*s  %s\n", width, label(f.key), tableValue(f.key, f.val))
		if m, ok := reasons[f.key]; ok {
			writeCounts(&sb, m)
		}
	}
	writeQueues(&sb, s.Queues)
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return fmt.Errorf("report: write summary table: %w", err)
	}
	return nil
}

// writeQueues writes the per-queue figures as a table of their own; none
// writes nothing.
func writeQueues(sb *strings.Builder, qs []metrics.QueueSummary) {
	if len(qs) == 0 {
		return
	}
	rows := [][]string{{"QUEUE", "WEIGHT", "JOBS", "DONE", "AVG JCT", "GPU-HOURS", "NORM GPU-HOURS", "SHARE", "RECLAIMED"}}
	for _, q := range qs {
		rows = append(rows, []string{q.Name, formatFixed(q.Weight, 3), group(strconv.Itoa(q.Jobs)), group(strconv.Itoa(q.Completed)),
			seconds(q.AvgJCT), group(formatFixed(q.GPUHours, 1)), group(formatFixed(q.NormGPUHours, 1)),
			strconv.FormatFloat(100*q.Share, 'f', 1, 64) + "%", group(strconv.Itoa(q.Reclaimed))})
	}
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	sb.WriteString("queues\n")
	for _, r := range rows {
		line := "  "
		for i, c := range r {
			if i > 0 {
				line += "  "
			}
			line += c + strings.Repeat(" ", width[i]-len([]rune(c)))
		}
		sb.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}

// writeCounts writes a map of reasons to counts as one indented line per
// reason, most frequent first (then by reason): "  3 × no GPU type can run
// it ...". An empty map writes nothing.
func writeCounts(sb *strings.Builder, m reflect.Value) {
	type entry struct {
		reason string
		n      int64
	}
	var es []entry
	for it := m.MapRange(); it.Next(); {
		es = append(es, entry{it.Key().String(), it.Value().Int()})
	}
	slices.SortFunc(es, func(a, b entry) int {
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.reason, b.reason))
	})
	for _, e := range es {
		fmt.Fprintf(sb, "  %s × %s\n", group(strconv.FormatInt(e.n, 10)), e.reason)
	}
}

// label turns a JSON key into a table label: the unit suffix goes, words are
// separated by spaces and the acronyms JCT and GPU are upper-cased
// ("avg_jct_s" → "avg JCT", "gpu_util" → "GPU util").
func label(key string) string {
	for _, unit := range []string{"_s", "_kwh"} {
		key = strings.TrimSuffix(key, unit)
	}
	words := strings.Split(key, "_")
	for i, w := range words {
		switch w {
		case "jct", "gpu":
			words[i] = strings.ToUpper(w)
		case "gpus":
			words[i] = "GPUs"
		}
	}
	return strings.Join(words, " ")
}

// tableValue formats the value of the summary field key for the table; an
// unknown figure (a nil pointer) is "n/a".
func tableValue(key string, v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "n/a"
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			return "-"
		}
		return v.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return group(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return group(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		return tableFloat(key, v.Float())
	default:
		return fmt.Sprint(v.Interface())
	}
}

// tableFloat formats a float field by the unit its key names.
func tableFloat(key string, f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "n/a"
	}
	switch {
	case strings.HasSuffix(key, "_s"):
		return seconds(f)
	case strings.HasSuffix(key, "_util"), strings.HasSuffix(key, "_share"):
		return strconv.FormatFloat(100*f, 'f', 1, 64) + "%"
	case strings.HasSuffix(key, "_kwh"):
		return group(strconv.FormatFloat(f, 'f', 3, 64)) + " kWh"
	default:
		return group(formatFixed(f, 3))
	}
}

// seconds formats a time in seconds: one decimal from 10 s up, milliseconds
// below, and the humanized form in parentheses from one minute up.
func seconds(f float64) string {
	if f == 0 {
		return "0 s"
	}
	prec := 1
	if math.Abs(f) < 10 {
		prec = 3
	}
	s := group(strconv.FormatFloat(f, 'f', prec, 64)) + " s"
	if math.Abs(f) >= 60 {
		s += " (" + humanize(f) + ")"
	}
	return s
}

// humanize writes a duration in seconds with its two largest units,
// truncated: "45s", "12m05s", "3h25m", "2d07h".
func humanize(f float64) string {
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	const minute, hour, day = 60, 3600, 86400
	t := int64(f)
	switch {
	case t >= day:
		return fmt.Sprintf("%s%dd%02dh", sign, t/day, t%day/hour)
	case t >= hour:
		return fmt.Sprintf("%s%dh%02dm", sign, t/hour, t%hour/minute)
	case t >= minute:
		return fmt.Sprintf("%s%dm%02ds", sign, t/minute, t%minute)
	default:
		return fmt.Sprintf("%s%ds", sign, t)
	}
}

// group inserts thousands separators into the integer part of the decimal
// number s ("-1234567.5" → "-1,234,567.5").
func group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}
