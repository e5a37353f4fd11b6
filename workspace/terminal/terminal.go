// Package terminal runs processes on pseudo-terminals for AHP terminal
// channels: a shell (or any command) on a real PTY (github.com/creack/pty),
// its output scanned for shell integration, its input queued without
// blocking, and its whole session of processes ended on Close.
//
// Quick start:
//
//	p, err := terminal.Start(terminal.Spec{Dir: dir, Cols: 80, Rows: 24}, func(ev terminal.Event) {
//		if ev.Kind == terminal.Output { fmt.Print(ev.Data) }
//	})
//	p.Input([]byte("echo hi\r"))
//	defer p.Close()
//
// Bash gets shell integration: ahpd starts it with an rc file that sources
// the user's ~/.bashrc and then reports prompts, command lines, exit codes
// and the working directory with OSC 633 sequences, which the scanner turns
// into events and strips from the output. Other shells run plain; their
// OSC 133 sequences are understood when they send them.
//
// Terminals run on Unix systems. On Windows the PTY library has no
// implementation (no ConPTY): Supported reports why, and Start fails with
// that error.
package terminal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// Spec says what to run.
type Spec struct {
	// Command is the program and its arguments; empty means the user's
	// shell ($SHELL, else /bin/bash, else /bin/sh).
	Command []string
	// Dir is the working directory.
	Dir string
	// Env is added to the process's environment (KEY=VALUE).
	Env []string
	// Cols and Rows are the initial size; zero means 80x24.
	Cols, Rows int
	// NoIntegration turns bash shell integration off.
	NoIntegration bool
}

// Process is one process on a PTY. Its methods are safe for concurrent
// use.
type Process struct {
	cmd   *exec.Cmd
	pty   *os.File
	rc    string // the integration rc file, removed on exit
	input chan []byte
	done  chan struct{} // closed once the process has exited and output is drained

	mu       sync.Mutex
	exitCode *int64
	signal   string
	closed   bool
	stop     chan struct{} // closed by Close
}

// InputQueue is how many input writes may wait for the process to read.
const InputQueue = 256

// Start starts a process. emit receives its output and events, in order,
// on one goroutine owned by the Process, until the process has exited;
// emit must not block for long (it throttles the process's output).
func Start(spec Spec, emit func(Event)) (*Process, error) {
	argv := spec.Command
	if len(argv) == 0 {
		argv = []string{defaultShell()}
	}
	cols, rows := spec.Cols, spec.Rows
	if cols <= 0 || rows <= 0 {
		cols, rows = 80, 24
	}
	p := &Process{input: make(chan []byte, InputQueue), done: make(chan struct{}), stop: make(chan struct{})}
	if filepath.Base(argv[0]) == "bash" && len(argv) == 1 && !spec.NoIntegration {
		rc, err := writeBashRC()
		if err != nil {
			return nil, err
		}
		p.rc = rc
		argv = []string{argv[0], "--rcfile", rc, "-i"}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor", "TERM_PROGRAM=ahpd")
	cmd.Env = append(cmd.Env, spec.Env...)
	f, err := startOnPTY(cmd, cols, rows)
	if err != nil {
		p.removeRC()
		return nil, fmt.Errorf("terminal: starting %s: %w", argv[0], err)
	}
	p.cmd, p.pty = cmd, f
	go p.writeLoop()
	go p.readLoop(emit)
	return p, nil
}

func defaultShell() string {
	if s := os.Getenv("SHELL"); s != "" {
		return s
	}
	for _, s := range []string{"/bin/bash", "/bin/sh"} {
		if _, err := os.Stat(s); err == nil {
			return s
		}
	}
	return "sh"
}

// Pid is the process id of the process (the PTY session's leader).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Input queues data for the process's standard input. It never blocks: it
// reports false when the queue is full (the process is not reading) or the
// process has ended.
func (p *Process) Input(data []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	select {
	case p.input <- data:
		return true
	default:
		return false
	}
}

// InputRoom reports whether Input would accept data now.
func (p *Process) InputRoom() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed && len(p.input) < cap(p.input)
}

// Resize changes the PTY's size.
func (p *Process) Resize(cols, rows int) error {
	if cols <= 0 || rows <= 0 || cols > 0xffff || rows > 0xffff {
		return fmt.Errorf("terminal: bad size %dx%d", cols, rows)
	}
	// Under the lock, so that the PTY is not closed meanwhile (readLoop).
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("terminal: the process has ended")
	}
	return pty.Setsize(p.pty, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
}

// Done is closed once the process has exited and its output was emitted.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitCode is the exit status once Done is closed; nil when the process
// was killed by a signal.
func (p *Process) ExitCode() *int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitCode
}

// Signal is the name of the signal that killed the process (SIGKILL, say)
// once Done is closed, or "".
func (p *Process) Signal() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.signal
}

// Close ends the process and every process of its terminal session: SIGHUP
// first, SIGKILL to what is left after grace. It waits until the process
// has exited.
func (p *Process) Close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.stop)
	}
	p.mu.Unlock()
	select {
	case <-p.done:
		p.killSession(syscall.SIGKILL) // background jobs left behind
		return nil
	default:
	}
	p.killSession(syscall.SIGHUP)
	select {
	case <-p.done:
	case <-time.After(time.Second):
		p.killSession(syscall.SIGKILL)
		<-p.done
	}
	p.killSession(syscall.SIGKILL)
	return nil
}

func (p *Process) writeLoop() {
	for {
		select {
		case data := <-p.input:
			if _, err := p.pty.Write(data); err != nil {
				return
			}
		case <-p.stop:
			return
		case <-p.done:
			return
		}
	}
}

// Output is read in chunks of up to maxChunk bytes. A PTY hands over at
// most a few KiB per read, and a program writing line by line (most do
// on a terminal) gets one line per read from a fast reader: a process
// printing fast would become thousands of small terminal/data actions,
// each encoded, sequenced and written to every subscriber on its own.
// After a read, what else arrives with no pause longer than gatherGap
// joins it, for up to gatherWindow and maxChunk bytes. A keystroke's echo
// waits gatherGap at most.
const (
	maxChunk     = 64 << 10
	gatherGap    = time.Millisecond
	gatherWindow = 4 * time.Millisecond
	minRead      = 4 << 10 // room left for one more read
)

func (p *Process) readLoop(emit func(Event)) {
	defer close(p.done)
	defer p.removeRC()
	var sc scanner
	buf := make([]byte, maxChunk)
	fd := int(p.pty.Fd())
	for {
		n, err := p.pty.Read(buf)
		if err == nil && n > 0 {
			n, err = p.gather(fd, buf, n)
		}
		if n > 0 {
			sc.feed(buf[:n], emit)
		}
		if err != nil {
			// EIO once the last process holding the terminal is gone.
			if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrClosed) {
				emit(Event{Kind: Output, Data: "\r\n[terminal read error: " + err.Error() + "]\r\n"})
			}
			break
		}
	}
	if len(sc.pending) > 0 {
		emit(Event{Kind: Output, Data: outputText(sc.pending)})
	}
	err := p.cmd.Wait()
	p.mu.Lock()
	p.pty.Close()
	if ps := p.cmd.ProcessState; ps != nil && ps.Exited() {
		code := int64(ps.ExitCode())
		p.exitCode = &code
	} else if ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.signal = signalName(ws.Signal())
		}
	}
	p.closed = true
	p.mu.Unlock()
	_ = err
}

func (p *Process) removeRC() {
	if p.rc != "" {
		os.Remove(p.rc)
	}
}

// bashRC reports prompts, command lines, exit codes and the working
// directory with OSC 633, after the user's own ~/.bashrc.
const bashRC = `# shell integration written by ahpd
if [ -z "$AHPD_NO_BASHRC" ] && [ -f ~/.bashrc ]; then . ~/.bashrc; fi
__ahpd_esc() { local s=${1//\\/\\\\}; s=${s//;/\\x3b}; s=${s//$'\n'/\\x0a}; printf '%s' "$s"; }
__ahpd_state=0
# PROMPT_COMMAND runs __ahpd_done first (the finished command's status),
# then what the user's rc set, then __ahpd_ready (the prompt is next).
__ahpd_done() {
  local ec=$?
  if [ "$__ahpd_state" = 2 ]; then printf '\e]633;D;%s\a' "$ec"; fi
  __ahpd_state=0
  return $ec
}
__ahpd_ready() {
  printf '\e]633;P;Cwd=%s\a\e]633;A\a' "$(__ahpd_esc "$PWD")"
  __ahpd_state=1
}
__ahpd_preexec() {
  [ "$__ahpd_state" = 1 ] || return 0
  case "$BASH_COMMAND" in __ahpd_done*|__ahpd_ready*) return 0 ;; esac
  __ahpd_state=2
  local line
  line=$(HISTTIMEFORMAT= builtin history 1 2>/dev/null | sed 's/^ *[0-9]* *//')
  [ -n "$line" ] || line=$BASH_COMMAND
  printf '\e]633;E;%s\a\e]633;C\a' "$(__ahpd_esc "$line")"
}
PROMPT_COMMAND=$'__ahpd_done\n'"${PROMPT_COMMAND}"$'\n__ahpd_ready'
trap '__ahpd_preexec' DEBUG
`

func writeBashRC() (string, error) {
	f, err := os.CreateTemp("", "ahpd-bashrc-*")
	if err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(bashRC); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("terminal: %w", err)
	}
	return f.Name(), nil
}
