//go:build windows

package vscodetest

import (
	"os/exec"
	"syscall"
)

// setGroup starts cmd in a new process group, which a console's Ctrl+Break
// reaches as a whole.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// stopGroup kills cmd's process. Windows cannot signal a process group
// from outside its console, so the processes it started (VS Code's server
// and extension hosts) may outlive it there.
func stopGroup(cmd *exec.Cmd, _ bool) error { return cmd.Process.Kill() }
