//go:build unix

package acp

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes the agent the leader of a new process group, so
// that the group can be ended as a whole with whatever the agent started.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// joinGroup does nothing on Unix: the agent leads its group from the
// start (setProcessGroup).
func joinGroup(*exec.Cmd) error { return nil }

// killGroup sends SIGTERM (or SIGKILL when hard) to the agent's process
// group. The group outlives its leader, so this works after the agent has
// exited too.
func killGroup(cmd *exec.Cmd, hard bool) {
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
