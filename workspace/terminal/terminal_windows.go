//go:build windows

package terminal

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// ErrNoPTY is why terminals cannot run on Windows: they need a
// pseudo-terminal, and the PTY library this build uses has none there
// (Windows' ConPTY is not supported).
var ErrNoPTY = errors.New("terminals need a pseudo-terminal (PTY), which this build of ahpd lacks on Windows")

// Supported reports whether this build can run terminals: on Windows it
// cannot (ErrNoPTY).
func Supported() error { return ErrNoPTY }

// startOnPTY fails: see ErrNoPTY.
func startOnPTY(*exec.Cmd, int, int) (*os.File, error) { return nil, ErrNoPTY }

// signalName names a signal; a Windows process is never ended by one.
func signalName(sig syscall.Signal) string { return sig.String() }

// killSession ends the process. Windows has no terminal sessions to end
// as a whole.
func (p *Process) killSession(syscall.Signal) {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
}

// gather leaves buf as the first read filled it: without poll(2) a read
// cannot be tried without blocking.
func (p *Process) gather(_ int, _ []byte, n int) (int, error) { return n, nil }
