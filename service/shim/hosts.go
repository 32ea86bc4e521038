package shim

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Files in a replica's directory.
const (
	// LogFile receives the replica's stdout and stderr.
	LogFile = "output.log"
	// HostfileFile is the host list in the hostfile syntax of horovodrun
	// --hostfile and mpirun ("host slots=N" lines): GPUSCHED_MPI_HOSTFILE.
	HostfileFile = "hostfile"
	// HostsFile is the host list as the server sends it ("host:slots"
	// lines), what a horovodrun --host-discovery-script prints:
	// GPUSCHED_HOSTFILE.
	HostsFile = "hosts"
	// DiscoverFile is that script: GPUSCHED_HOST_DISCOVERY_SCRIPT.
	DiscoverFile = "discover-hosts.sh"
)

// hostEntry is one "host:slots" line of a host list.
type hostEntry struct {
	host  string
	slots int
}

// parseHostList reads a host list of "host:slots" lines; lines that do not
// have that form are skipped.
func parseHostList(list string) []hostEntry {
	var out []hostEntry
	for line := range strings.Lines(list) {
		line = strings.TrimSpace(line)
		i := strings.LastIndexByte(line, ':')
		if i <= 0 {
			continue
		}
		n, err := strconv.Atoi(line[i+1:])
		if err != nil || n < 0 {
			continue
		}
		out = append(out, hostEntry{host: line[:i], slots: n})
	}
	return out
}

// hostfileText renders hosts in the "host slots=N" syntax.
func hostfileText(hosts []hostEntry) string {
	var b strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&b, "%s slots=%d\n", h.host, h.slots)
	}
	return b.String()
}

// hostsText renders hosts as "host:slots" lines.
func hostsText(hosts []hostEntry) string {
	var b strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&b, "%s:%d\n", h.host, h.slots)
	}
	return b.String()
}

// hostsFlag renders hosts as horovodrun's -H value, "h1:4,h2:4".
func HostsFlag(hosts []hostEntry) string {
	return strings.TrimSuffix(strings.ReplaceAll(hostsText(hosts), "\n", ","), ",")
}

// staticHosts is the host list for launchers that read it once
// (GPUSCHED_MPI_HOSTFILE, GPUSCHED_HOSTS): the list, except that a job on this
// node alone names it "localhost", so that horovodrun starts its workers
// directly instead of trying ssh when the node's name does not resolve to
// one of its interfaces.
func StaticHosts(list, self string) []hostEntry {
	hosts := parseHostList(list)
	if len(hosts) == 1 && hosts[0].host == self {
		hosts[0].host = "localhost"
	}
	return hosts
}

// writeHostFiles writes the replica's host files into dir: the hostfile
// (staticHosts), the host list as sent and the discovery script that
// prints it. Each write is atomic, so a reader (a running horovodrun
// polling its discovery script) never sees half a list.
func WriteHostFiles(dir, list, self string) error {
	hosts := parseHostList(list)
	if err := WriteFile(filepath.Join(dir, HostfileFile), []byte(hostfileText(StaticHosts(list, self))), 0o644, -1, -1); err != nil {
		return err
	}
	if err := WriteFile(filepath.Join(dir, HostsFile), []byte(hostsText(hosts)), 0o644, -1, -1); err != nil {
		return err
	}
	script := "#!/bin/sh\n# Prints the job's current hosts, one host:slots line each (written by gpusched).\nexec cat " +
		shellQuote(filepath.Join(dir, HostsFile)) + "\n"
	return WriteFile(filepath.Join(dir, DiscoverFile), []byte(script), 0o755, -1, -1)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
