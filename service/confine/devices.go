package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	devcfg "github.com/opencontainers/cgroups/devices/config"
	"golang.org/x/sys/unix"
)

// NvidiaControl are the NVIDIA devices every CUDA process opens besides
// its GPUs' /dev/nvidiaN: the driver's control device, the unified memory
// devices and the mode-setting device.
var NvidiaControl = []string{"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"}

// baseRules are the devices every box may use, as runc allows them to a
// container: mknod of any device (opening it is what is checked),
// /dev/null, zero, full, random, urandom, tty, console, ptmx, the
// pseudo-terminals and tun.
func baseRules() []*devcfg.Rule {
	rule := func(t devcfg.Type, major, minor int64, perm devcfg.Permissions) *devcfg.Rule {
		return &devcfg.Rule{Type: t, Major: major, Minor: minor, Permissions: perm, Allow: true}
	}
	w := int64(devcfg.Wildcard)
	return []*devcfg.Rule{
		{Type: devcfg.WildcardDevice, Major: w, Minor: w, Permissions: "rwm", Allow: false}, // deny all, then allow
		rule(devcfg.CharDevice, w, w, "m"), rule(devcfg.BlockDevice, w, w, "m"),
		rule(devcfg.CharDevice, 1, 3, "rwm"), rule(devcfg.CharDevice, 1, 5, "rwm"), // null, zero
		rule(devcfg.CharDevice, 1, 7, "rwm"), rule(devcfg.CharDevice, 1, 8, "rwm"), // full, random
		rule(devcfg.CharDevice, 1, 9, "rwm"), rule(devcfg.CharDevice, 5, 0, "rwm"), // urandom, tty
		rule(devcfg.CharDevice, 5, 1, "rwm"), rule(devcfg.CharDevice, 5, 2, "rwm"), // console, ptmx
		rule(devcfg.CharDevice, 136, w, "rwm"), rule(devcfg.CharDevice, 10, 200, "rwm"), // pts, tun
	}
}

// DeviceRules are the device rules of a replica given the GPUs whose
// device nodes are nvidiaN for N in gpus (their minor numbers) on a node whose device nodes are in dir (/dev): the base
// devices (baseRules), the NVIDIA control devices (NvidiaControl), the
// RDMA devices under dir/infiniband (a multi-node job's NCCL needs them)
// and the replica's own dir/nvidiaN — every other GPU is denied. Devices
// that do not exist in dir are left out; a name in dir that is not a
// character device is an error.
func DeviceRules(dir string, gpus []int) ([]*devcfg.Rule, error) {
	rules := baseRules()
	names := append([]string(nil), NvidiaControl...)
	for _, g := range gpus {
		names = append(names, "nvidia"+strconv.Itoa(g))
	}
	ib, err := os.ReadDir(filepath.Join(dir, "infiniband"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("devices: %w", err)
	}
	for _, e := range ib {
		names = append(names, filepath.Join("infiniband", e.Name()))
	}
	for _, name := range names {
		r, err := charRule(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// charRule allows the character device at path.
func charRule(path string) (*devcfg.Rule, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, fmt.Errorf("device %s: %w", path, &fs.PathError{Op: "stat", Path: path, Err: err})
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return nil, fmt.Errorf("device %s: not a character device", path)
	}
	return &devcfg.Rule{Type: devcfg.CharDevice, Major: int64(unix.Major(st.Rdev)), Minor: int64(unix.Minor(st.Rdev)),
		Permissions: "rwm", Allow: true}, nil
}
