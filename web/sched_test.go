package web_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// mainThreads is the renderers of one browser, for a measurement: each
// renderer's process ID, which is also the thread ID of its main thread.
type mainThreads struct {
	pids   []int
	raised bool // whether their priority could be raised
	undo   []func()
}

// restore puts the threads' priorities back, last raised first (their
// scheduling groups may be one).
func (m *mainThreads) restore() {
	for i := len(m.undo) - 1; i >= 0; i-- {
		m.undo[i]()
	}
	m.undo = nil
}

// rendererMains finds the browser's renderer processes (from /proc, so on
// Linux only) and raises the scheduling priority of their main threads
// where the test is allowed to.
func (b *browser) rendererMains() *mainThreads {
	b.t.Helper()
	m := &mainThreads{}
	proc := chromedp.FromContext(b.ctx).Browser.Process()
	if proc == nil {
		return m
	}
	for _, pid := range descendants(proc.Pid) {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if bytes.Contains(cmd, []byte("--type=renderer")) {
			m.pids = append(m.pids, pid)
		}
	}
	m.raised = len(m.pids) > 0
	for _, pid := range m.pids {
		undo, err := raisePriority(pid)
		if undo != nil {
			m.undo = append(m.undo, undo)
		}
		if err != nil {
			m.raised = false
			b.t.Logf("cannot raise the priority of renderer %d, so the long tasks may count time spent waiting for a CPU: %v", pid, err)
			break
		}
	}
	b.t.Cleanup(m.restore)
	return m
}

// descendants returns the processes below pid.
func descendants(pid int) []int {
	children := map[int][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		self, err1 := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		parent, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil {
			children[parent] = append(children[parent], self)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// schedStat is a thread's time on a CPU and waiting for one.
type schedStat struct{ run, wait time.Duration }

func (m *mainThreads) stats() map[int]schedStat {
	out := map[int]schedStat{}
	for _, pid := range m.pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		run, _ := strconv.ParseInt(f[0], 10, 64)
		wait, _ := strconv.ParseInt(f[1], 10, 64)
		out[pid] = schedStat{time.Duration(run), time.Duration(wait)}
	}
	return out
}

// describe tells what the busiest renderer's main thread did between two
// readings of stats.
func (m *mainThreads) describe(before, after map[int]schedStat) string {
	var best schedStat
	found := false
	for pid, a := range after {
		d := schedStat{a.run - before[pid].run, a.wait - before[pid].wait}
		if !found || d.run > best.run {
			best, found = d, true
		}
	}
	if !found {
		return "the renderer's main thread was not found"
	}
	prio := "at its usual priority"
	if m.raised {
		prio = "at a raised priority"
	}
	return fmt.Sprintf("the renderer's main thread ran %v on a CPU and waited %v for one, %s",
		best.run.Round(time.Millisecond), best.wait.Round(time.Millisecond), prio)
}
