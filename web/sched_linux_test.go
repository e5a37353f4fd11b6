package web_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// raisePriority gives the thread tid a high scheduling priority, and the
// group it is scheduled in too, and returns what puts both back. On Linux
// a nice value belongs to one thread (the one whose ID is given), and
// where the kernel groups processes by session (autogroup) it counts only
// against the threads of the same group: the group's own nice value sets
// its share of the machine against other sessions' work.
func raisePriority(tid int) (restore func(), err error) {
	prev, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return nil, err
	}
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, -20); err != nil {
		return nil, err
	}
	// Getpriority returns 20 - nice, so that it is never negative.
	undo := func() { syscall.Setpriority(syscall.PRIO_PROCESS, tid, 20-prev) }
	group, had, err := groupNice(tid)
	if err != nil || !had {
		return undo, err
	}
	if err := setGroupNice(tid, -20); err != nil {
		return undo, err
	}
	return func() { undo(); setGroupNice(tid, group) }, nil
}

// groupNice reads the nice value of tid's autogroup, where the kernel has
// autogroups ("/autogroup-N nice V").
func groupNice(tid int) (nice int, ok bool, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/autogroup", tid))
	if err != nil {
		return 0, false, nil // no autogroups: the thread's nice value is enough
	}
	f := strings.Fields(string(b))
	if len(f) != 3 || f[1] != "nice" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(f[2])
	return n, err == nil, err
}

func setGroupNice(tid, nice int) error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/autogroup", tid), []byte(strconv.Itoa(nice)), 0); err != nil {
		return fmt.Errorf("setting the nice value of the scheduling group: %w", err)
	}
	return nil
}
