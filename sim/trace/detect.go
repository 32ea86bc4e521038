package trace

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// CSV headers of the formats that have one.
const (
	phillyHeader   = "timestamp,duration,num_gpus,gpu_time,cluster"
	tiresiasHeader = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval"
	polluxHeader   = "name,time,application,num_replicas,batch_size"
)

// gavelColumns is the number of tab-separated columns of a Gavel trace line.
const gavelColumns = 10

// Detect picks a trace format from the file name and the first bytes of the
// file (head; a prefix of the file is enough). In order:
//   - a first line that is the CSV header of philly, tiresias, pollux or
//     an Alibaba 2023 pod list selects that format (an Alibaba node list,
//     or a pod list without times, selects alibaba too, whose reader says
//     what to give instead);
//   - the extension .trace selects gavel, .jsonl or .ndjson selects jsonl;
//   - a first line that starts with "{" selects jsonl, one with ten
//     tab-separated columns selects gavel.
//
// Blank lines and a UTF-8 byte order mark before the first line are skipped.
// When nothing matches, the *Error says which extension and first line were
// looked at.
func Detect(name string, head []byte) (string, error) {
	first := firstLine(head)
	switch {
	case headerIs(first, phillyHeader):
		return formatPhilly, nil
	case headerIs(first, tiresiasHeader):
		return formatTiresias, nil
	case headerIs(first, polluxHeader):
		return formatPollux, nil
	case headerIs(first, alibabaHeader), headerIs(first, alibabaNoTimes), headerIs(first, alibabaNodesHeader):
		return formatAlibaba, nil // the reader explains the last two
	}
	ext := strings.ToLower(filepath.Ext(name))
	switch ext {
	case ".trace":
		return formatGavel, nil
	case ".jsonl", ".ndjson":
		return formatJSONL, nil
	}
	switch {
	case bytes.HasPrefix(first, []byte("{")):
		return formatJSONL, nil
	case bytes.Count(first, []byte{'\t'}) == gavelColumns-1:
		return formatGavel, nil
	}
	return "", &Error{File: name, Msg: fmt.Sprintf(
		"cannot detect the trace format: extension %q is not .trace, .jsonl or .ndjson, and the first line %s "+
			"is no known header (philly %q, tiresias %q, pollux %q, alibaba %q), JSON object or %d tab-separated Gavel columns; "+
			"give --format", ext, quote(first), phillyHeader, tiresiasHeader, polluxHeader, alibabaHeader, gavelColumns)}
}

// firstLine returns the first non-blank line of head without its
// end-of-line bytes and surrounding spaces (and without a byte order mark).
func firstLine(head []byte) []byte {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	for len(head) > 0 {
		line, rest, _ := bytes.Cut(head, []byte{'\n'})
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line
		}
		head = rest
	}
	return nil
}
