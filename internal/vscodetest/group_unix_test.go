//go:build unix

package vscodetest

import (
	"os/exec"
	"syscall"
)

// setGroup makes cmd the leader of a new process group.
func setGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// stopGroup sends SIGTERM, or SIGKILL when hard, to cmd's process group.
func stopGroup(cmd *exec.Cmd, hard bool) error {
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}
