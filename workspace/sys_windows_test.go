//go:build windows

package workspace_test

import (
	"time"

	"golang.org/x/sys/windows"
)

// cpuTime is the CPU time this process has used, user and kernel.
func cpuTime() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user) != nil {
		return 0
	}
	return time.Duration(kernel.Nanoseconds() + user.Nanoseconds())
}
