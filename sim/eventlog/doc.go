// Package eventlog defines the simulator's event log (DESIGN.md, "Event log"):
// one JSON object per line, in time order, and a buffered writer for it.
package eventlog
