package buildtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// Close stops the daemon (SIGTERM, then SIGKILL to its process group after 15s),
// unmounts what it left mounted under Root and removes Root.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		regtest.StopGroup(d.cmd.Process.Pid, d.exited, 15*time.Second)
		unmountUnder(d.Root)
		if err := os.RemoveAll(d.Root); err != nil {
			d.closeErr = fmt.Errorf("removing buildkitd root: %w", err)
		}
	})
	return d.closeErr
}

// LogTail returns the last n lines of the daemon's log.
func (d *Daemon) LogTail(n int) string {
	dt, err := os.ReadFile(d.LogFile)
	if err != nil {
		return "(no buildkitd log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(dt), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "buildkitd log (" + d.LogFile + "):\n" + strings.Join(lines, "\n")
}

// unmountUnder lazily unmounts every mount point below dir, deepest first.
func unmountUnder(dir string) {
	dt, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	sc := bufio.NewScanner(bytes.NewReader(dt))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			points = append(points, fields[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		_ = syscall.Unmount(p, syscall.MNT_DETACH)
	}
}
