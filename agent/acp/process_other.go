//go:build !unix && !windows

package acp

import "os/exec"

// setProcessGroup does nothing where process groups do not exist.
func setProcessGroup(*exec.Cmd) {}

// joinGroup does nothing where process groups do not exist.
func joinGroup(*exec.Cmd) error { return nil }

// killGroup kills the agent process; processes it started are not
// reached on this platform.
func killGroup(cmd *exec.Cmd, _ bool) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
