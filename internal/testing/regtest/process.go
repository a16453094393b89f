package regtest

import (
	"syscall"
	"time"
)

// StopGroup stops the process group led by pid as an operator would:
// SIGTERM, then SIGKILL after grace when exited is still open. It returns
// once exited is closed (the caller closes it when its Wait returns). The
// harnesses that run daemons (disttest's registry, buildtest's buildkitd)
// start them with Setpgid, so that the group takes their children too.
func StopGroup(pid int, exited <-chan struct{}, grace time.Duration) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
}
