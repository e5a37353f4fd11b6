//go:build unix

package terminal

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Supported reports whether this build can run terminals: nil on Unix.
func Supported() error { return nil }

// startOnPTY starts cmd on a new PTY of the given size, in a session of its
// own.
func startOnPTY(cmd *exec.Cmd, cols, rows int) (*os.File, error) {
	return pty.StartWithAttrs(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}, sessionAttrs())
}

func signalName(sig syscall.Signal) string { return unix.SignalName(sig) }

// killSession signals every process whose session is the terminal's.
func (p *Process) killSession(sig syscall.Signal) {
	sid := p.cmd.Process.Pid
	for _, pid := range sessionMembers(sid) {
		syscall.Kill(pid, sig)
	}
	syscall.Kill(-sid, sig) // the leader's group, in case /proc is unreadable
}

// sessionMembers lists the processes in session sid, from /proc.
func sessionMembers(sid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session ...; comm may hold spaces.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 3 && f[3] == strconv.Itoa(sid) {
			out = append(out, pid)
		}
	}
	return out
}

// gather reads more output into buf after its first n bytes, while more
// arrives within gatherGap of the last, for up to gatherWindow, and while
// buf has room. It returns the bytes now in buf and the error of the last
// read.
func (p *Process) gather(fd int, buf []byte, n int) (int, error) {
	end := time.Now().Add(gatherWindow)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for len(buf)-n >= minRead {
		wait := min(time.Until(end), gatherGap)
		if wait <= 0 {
			break
		}
		// poll(2) counts in milliseconds: round up, never to zero.
		ready, err := unix.Poll(fds, int((wait+time.Millisecond-1)/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || ready == 0 {
			break // nothing more in time; a poll error shows on the next read
		}
		m, err := p.pty.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
