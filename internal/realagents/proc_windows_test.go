//go:build windows

package realagents_test

import "os"

// killProcessGroup kills the agent process pid; ahpd ends the rest of its
// job object when it sees the agent die.
func killProcessGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
