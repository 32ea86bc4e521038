package api

import "fmt"

// FieldError is a problem with one field of a request; Field is empty when
// the problem is with the request as a whole (malformed JSON).
type FieldError struct {
	Field   string
	Message string
}

// Error returns "field: message" (or the message alone).
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func fieldErr(field, format string, a ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, a...)}
}

// Error is the body of every 4xx and 5xx answer.
type Error struct {
	// Error says what went wrong, e.g. "min_gpus: 5 is above max_gpus 4".
	Error string `json:"error"`
	// Field names the offending field of the request, when there is one.
	Field string `json:"field,omitempty"`
}
