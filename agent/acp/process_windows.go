//go:build windows

package acp

import (
	"fmt"
	"os/exec"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// groups holds the job object of each agent process started here, until
// the job is ended (killGroup with hard).
var groups sync.Map // *exec.Cmd → windows.Handle

// setProcessGroup does nothing before the start on Windows: the agent is
// put into a job object of its own once it runs (joinGroup).
func setProcessGroup(*exec.Cmd) {}

// joinGroup puts the started agent into a new job object, which the
// processes it starts from then on join too, so that the job can be ended
// as a whole. The job is set to kill what is in it when its last handle
// closes, so agents do not outlive ahpd. A process the agent started
// before it joined is not in the job.
func joinGroup(cmd *exec.Cmd) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("creating a job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("setting up the job object: %w", err)
	}
	proc, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("opening the agent process: %w", err)
	}
	err = windows.AssignProcessToJobObject(job, proc)
	windows.CloseHandle(proc)
	if err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("putting the agent into its job object: %w", err)
	}
	groups.Store(cmd, job)
	return nil
}

// killGroup ends the agent's job object, and so every process in it, when
// hard; the job outlives the agent, so this works after the agent has
// exited too. Windows has no SIGTERM: the polite request is the closing of
// the agent's stdin, which the caller has done, so a soft kill leaves the
// agent its grace period. An agent that is in no job is killed alone.
func killGroup(cmd *exec.Cmd, hard bool) {
	if !hard {
		return
	}
	if job, ok := groups.LoadAndDelete(cmd); ok {
		windows.TerminateJobObject(job.(windows.Handle), 1)
		windows.CloseHandle(job.(windows.Handle))
		return
	}
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
