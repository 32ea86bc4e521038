//go:build linux

package agenttest

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// NVIDIAMajor is the character-device major number of NVIDIA's GPUs.
const NVIDIAMajor = 195

// FakeGPUs makes, in dir, the device nodes of n NVIDIA GPUs (nvidia0 …,
// minor = index) and of nvidiactl (minor 255), mode 0666. Without a driver
// they open with ENXIO; a device rule that denies one makes it EPERM,
// which is how confinement is proven without a GPU. It needs root
// (mknod).
func FakeGPUs(dir string, n int) error {
	for i := range n + 1 {
		name, minor := fmt.Sprintf("nvidia%d", i), uint32(i)
		if i == n {
			name, minor = "nvidiactl", 255
		}
		path := filepath.Join(dir, name)
		if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(NVIDIAMajor, minor))); err != nil {
			return fmt.Errorf("mknod %s: %w", path, err)
		}
		if err := os.Chmod(path, 0o666); err != nil { // past the umask
			return fmt.Errorf("fake GPU %s: %w", path, err)
		}
	}
	return nil
}
