package config

import (
	"fmt"
	"strconv"
	"strings"
)

// checkNetwork checks the storage list, the network block and the nodes'
// racks and links; errors name the field.
func (f *File) checkNetwork(file string) error {
	if err := f.checkStorage(file); err != nil {
		return err
	}
	if _, err := f.topology(); err != nil {
		return fieldError(file, "network"+err.field, "%s", err.msg)
	}
	if err := f.checkUploads(file); err != nil {
		return err
	}
	for i, n := range f.Nodes {
		field := "nodes[" + strconv.Itoa(i) + "]"
		if err := checkRack(n.Rack); err != nil {
			return fieldError(file, field+".rack", "%s", err)
		}
		seen := map[string]int{}
		for k, l := range n.Links {
			lf := field + ".links[" + strconv.Itoa(k) + "]"
			if f.storageIndex(l.Storage) < 0 {
				return fieldError(file, lf+".storage", "%s", f.unknownStorage(l.Storage))
			}
			if j, dup := seen[l.Storage]; dup {
				return fieldError(file, lf+".storage", "storage device %q already linked by links[%d]", l.Storage, j)
			}
			seen[l.Storage] = k
			if err := l.link().check(); err != nil {
				return fieldError(file, lf+err.field, "%s", err.msg)
			}
			if err := checkEndpointField(l.Endpoint); err != nil {
				return fieldError(file, lf+".endpoint", "%s", err)
			}
		}
	}
	return nil
}

// checkStorage checks the storage list.
func (f *File) checkStorage(file string) error {
	seen := map[string]int{}
	for s, st := range f.Storage {
		field := storageField(s)
		if msg := checkNodeName(st.Name); msg != "" {
			return fieldError(file, field+".name", "%s", msg)
		}
		if j, dup := seen[st.Name]; dup {
			return fieldError(file, field+".name", "storage device %q already declared by storage[%d]", st.Name, j)
		}
		seen[st.Name] = s
		if err := checkRack(st.Rack); err != nil {
			return fieldError(file, field+".rack", "%s", err)
		}
		if len(st.Interfaces) == 0 {
			return fieldError(file, field+".interfaces", "at least one interface is required")
		}
		for i, in := range st.Interfaces {
			if err := st.checkInterface(i, in); err != nil {
				return fieldError(file, field+".interfaces["+strconv.Itoa(i)+"]"+err.field, "%s", err.msg)
			}
		}
	}
	return nil
}

// checkInterface checks interface i of s.
func (s *StorageSpec) checkInterface(i int, in InterfaceSpec) *specError {
	if msg := checkNodeName(in.Name); msg != "" {
		return &specError{".name", msg}
	}
	if j := s.interfaceIndex(in.Name); j < i {
		return &specError{".name", fmt.Sprintf("interface %q already declared by interfaces[%d]", in.Name, j)}
	}
	switch {
	case in.BandwidthGbps == nil:
		return &specError{".bandwidth_gbps", "required"}
	case in.LatencyMs == nil:
		return &specError{".latency_ms", "required"}
	}
	if msg := checkBandwidth(in.BandwidthGbps); msg != "" {
		return &specError{".bandwidth_gbps", msg}
	}
	if msg := checkLatency(in.LatencyMs); msg != "" {
		return &specError{".latency_ms", msg}
	}
	if msg := checkQuality(in.Quality); msg != "" {
		return &specError{".quality", msg}
	}
	if err := checkEndpointField(in.Endpoint); err != nil {
		return &specError{".endpoint", err.Error()}
	}
	return nil
}

// checkEndpointField checks an optional endpoint.
func checkEndpointField(e string) error {
	if e == "" {
		return nil
	}
	return CheckEndpoint(e)
}

// checkUploads checks the network block's uploads.
func (f *File) checkUploads(file string) error {
	if f.Network == nil {
		return nil
	}
	seen := map[[2]string]int{}
	for k, u := range f.Network.Uploads {
		field := "network.uploads[" + strconv.Itoa(k) + "]"
		if strings.TrimSpace(u.Address) == "" {
			return fieldError(file, field+".address", "must not be empty")
		}
		st, in, ok := strings.Cut(u.Interface, "/")
		s := f.storageIndex(st)
		switch {
		case !ok:
			return fieldError(file, field+".interface", "%q: want STORAGE/INTERFACE", u.Interface)
		case s < 0:
			return fieldError(file, field+".interface", "%s", f.unknownStorage(st))
		case f.Storage[s].interfaceIndex(in) < 0:
			return fieldError(file, field+".interface", "storage device %q has no interface %q", st, in)
		}
		key := [2]string{u.Address, u.Interface}
		if j, dup := seen[key]; dup {
			return fieldError(file, field, "address %q and interface %q already given by uploads[%d]", u.Address, u.Interface, j)
		}
		seen[key] = k
		if msg := checkLatency(u.LatencyMs); msg != "" {
			return fieldError(file, field+".latency_ms", "%s", msg)
		}
		if msg := checkQuality(u.Quality); msg != "" {
			return fieldError(file, field+".quality", "%s", msg)
		}
	}
	return nil
}

// checkRack returns why a rack name is not acceptable, or nil; empty means
// no rack.
func checkRack(rack string) error {
	if rack == "" {
		return nil
	}
	if msg := checkNodeName(rack); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// unknownStorage describes a reference to a storage device that the file
// does not declare.
func (f *File) unknownStorage(name string) string {
	if len(f.Storage) == 0 {
		return fmt.Sprintf("unknown storage device %q: the file declares none (add a storage list)", name)
	}
	names := make([]string, len(f.Storage))
	for s, st := range f.Storage {
		names[s] = st.Name
	}
	return fmt.Sprintf("unknown storage device %q (declared: %s)", name, strings.Join(names, ", "))
}
