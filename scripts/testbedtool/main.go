// Command testbedtool is the small Go half of scripts/testbed: it picks free
// loopback ports and writes the bed's certificates, service-account keys and
// admin kubeconfig, so that the bed needs nothing beyond Go (no openssl).
//
//	go run ./scripts/testbedtool ports N             N free TCP ports on 127.0.0.1, one a line
//	go run ./scripts/testbedtool pki DIR             CA, serving and admin certificates, SA keys
//	go run ./scripts/testbedtool kubeconfig PKI URL OUT   admin kubeconfig for the API at URL
//	go run ./scripts/testbedtool setup DIR N         all three for a bed: prints N ports, writes
//	                                                 DIR/pki and DIR/kubeconfig for the first port
//
// `pki` writes into DIR: ca.crt, ca.key (the cluster CA), apiserver.crt,
// apiserver.key (serving certificate for 127.0.0.1, localhost and the
// in-cluster names of the `kubernetes` service), admin.crt, admin.key (a
// client certificate in group system:masters) and sa.key, sa.pub (the
// service-account token signing pair). All keys are ECDSA P-256.
// `kubeconfig` embeds PKI/ca.crt, PKI/admin.crt and PKI/admin.key.
package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// errUsage marks a bad command line (exit status 2).
var errUsage = errors.New("usage: testbedtool ports N | pki DIR | kubeconfig PKI URL OUT | setup DIR N")

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "testbedtool:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errUsage
	}
	switch {
	case args[0] == "ports" && len(args) == 2:
		ports, err := freePorts(args[1])
		if err != nil {
			return err
		}
		printPorts(ports)
		return nil
	case args[0] == "pki" && len(args) == 2:
		return writePKI(args[1])
	case args[0] == "kubeconfig" && len(args) == 4:
		return writeKubeconfig(args[1], args[2], args[3])
	case args[0] == "setup" && len(args) == 3:
		return setup(args[1], args[2])
	}
	return errUsage
}

// setup picks count ports, writes dir/pki and dir/kubeconfig for an API
// server on the first port, and prints the ports.
func setup(dir, count string) error {
	ports, err := freePorts(count)
	if err != nil {
		return err
	}
	pki := filepath.Join(dir, "pki")
	if err := writePKI(pki); err != nil {
		return err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	if err := writeKubeconfig(pki, server, filepath.Join(dir, "kubeconfig")); err != nil {
		return err
	}
	printPorts(ports)
	return nil
}

func printPorts(ports []int) {
	for _, p := range ports {
		fmt.Println(p)
	}
}

// freePorts returns count distinct ports that were free on 127.0.0.1: it
// holds all the listeners open before closing them, so no port repeats.
func freePorts(count string) ([]int, error) {
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || n > 64 {
		return nil, fmt.Errorf("ports: count %q is not a number from 1 to 64: %w", count, errUsage)
	}
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
