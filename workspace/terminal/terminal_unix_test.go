//go:build unix

package terminal

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// recorder collects a process's events.
type recorder struct {
	mu     sync.Mutex
	events []Event
	out    strings.Builder
	wake   chan struct{}
}

func newRecorder() *recorder { return &recorder{wake: make(chan struct{}, 1)} }

func (r *recorder) emit(ev Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	if ev.Kind == Output {
		r.out.WriteString(ev.Data)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *recorder) waitFor(t *testing.T, what string, cond func(out string, evs []Event) bool) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		r.mu.Lock()
		ok := cond(r.out.String(), r.events)
		out := r.out.String()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.wake:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; output so far %q", what, out)
		}
	}
}

func bashSpec(t *testing.T) Spec {
	return Spec{Command: []string{"/usr/bin/bash"}, Dir: t.TempDir(), Env: []string{"AHPD_NO_BASHRC=1", "HOME=" + t.TempDir(), "PS1=$ "}}
}

func TestBashShellIntegration(t *testing.T) {
	if _, err := syscall.Getpgid(1); err != nil {
		t.Skip(err)
	}
	r := newRecorder()
	p, err := Start(bashSpec(t), r.emit)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r.waitFor(t, "a prompt", func(_ string, evs []Event) bool { return has(evs, PromptStarted, "") })
	if !p.Input([]byte("echo hello-$((40+2)); (exit 3)\r")) {
		t.Fatal("input refused")
	}
	r.waitFor(t, "the command to finish", func(_ string, evs []Event) bool { return has(evs, CommandFinished, "") })
	r.mu.Lock()
	out := r.out.String()
	var started, finished *Event
	for i := range r.events {
		switch r.events[i].Kind {
		case CommandStarted:
			started = &r.events[i]
		case CommandFinished:
			finished = &r.events[i]
		}
	}
	r.mu.Unlock()
	if !strings.Contains(out, "hello-42") {
		t.Fatalf("output %q", out)
	}
	if strings.Contains(out, "\x1b]633") {
		t.Fatalf("shell integration leaked into the output: %q", out)
	}
	if started == nil || started.Text != "echo hello-$((40+2)); (exit 3)" {
		t.Fatalf("command line %+v", started)
	}
	if finished == nil || finished.ExitCode == nil || *finished.ExitCode != 3 {
		t.Fatalf("finished %+v", finished)
	}
	p.Input([]byte("cd /tmp\r"))
	r.waitFor(t, "the new directory", func(_ string, evs []Event) bool { return has(evs, Cwd, "/tmp") })
	p.Input([]byte("exit 7\r"))
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("bash did not exit")
	}
	if c := p.ExitCode(); c == nil || *c != 7 {
		t.Fatalf("exit code %v", c)
	}
}

func has(evs []Event, k EventKind, text string) bool {
	for _, e := range evs {
		if e.Kind == k && (text == "" || e.Text == text) {
			return true
		}
	}
	return false
}

// Close ends the shell and what it left running in the background, so no
// process outlives its terminal.
func TestCloseEndsTheWholeSession(t *testing.T) {
	r := newRecorder()
	p, err := Start(bashSpec(t), r.emit)
	if err != nil {
		t.Fatal(err)
	}
	p.Input([]byte("sleep 1000 & echo bg=$!; trap '' HUP\r"))
	re := regexp.MustCompile(`bg=(\d+)`)
	var pid int
	r.waitFor(t, "the background pid", func(out string, _ []Event) bool {
		m := re.FindStringSubmatch(out)
		if m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
		return m != nil
	})
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("background sleep not running: %v", err)
	}
	start := time.Now()
	p.Close()
	t.Logf("closed in %v", time.Since(start))
	// The sleep is reaped by init once killed; give it a moment.
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("background process %d outlived its terminal", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p.Input([]byte("x")) {
		t.Fatal("input accepted after Close")
	}
}

func zombie(pid int) bool {
	var s string
	if b, err := readFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		s = b
	}
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] == 'Z'
}

func TestResizeAndPlainCommand(t *testing.T) {
	r := newRecorder()
	p, err := Start(Spec{Command: []string{"/bin/sh", "-c", "stty size; read x; echo got $x"}, Dir: t.TempDir(), Cols: 100, Rows: 30}, r.emit)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r.waitFor(t, "the size", func(out string, _ []Event) bool { return strings.Contains(out, "30 100") })
	if err := p.Resize(0, 5); err == nil {
		t.Fatal("a zero size was accepted")
	}
	must(t, p.Resize(120, 40))
	p.Input([]byte("abc\r"))
	r.waitFor(t, "the echo", func(out string, _ []Event) bool { return strings.Contains(out, "got abc") })
	<-p.Done()
	if c := p.ExitCode(); c == nil || *c != 0 {
		t.Fatalf("exit %v", c)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readFile(p string) (string, error) {
	b, err := osReadFile(p)
	return string(b), err
}

var osReadFile = os.ReadFile

// A process printing fast has its output gathered into events of up to
// maxChunk bytes; every byte arrives, in order.
func TestFastOutputGathered(t *testing.T) {
	const lines = 20000 // 20000 numbered lines: about 240 KB
	r := newRecorder()
	p, err := Start(Spec{Command: []string{"/bin/sh", "-c", fmt.Sprintf("seq -w 1 %d", lines)}, Dir: t.TempDir()}, r.emit)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	<-p.Done()
	r.mu.Lock()
	defer r.mu.Unlock()
	outputs := 0
	for _, ev := range r.events {
		if ev.Kind != Output {
			continue
		}
		outputs++
		if len(ev.Data) > maxChunk {
			t.Fatalf("an output event of %d bytes, over %d", len(ev.Data), maxChunk)
		}
	}
	got := strings.Split(strings.TrimSuffix(r.out.String(), "\r\n"), "\r\n")
	if len(got) != lines {
		t.Fatalf("%d lines, want %d", len(got), lines)
	}
	for i, l := range got {
		if want := fmt.Sprintf("%05d", i+1); l != want {
			t.Fatalf("line %d is %q, want %q", i, l, want)
		}
	}
	t.Logf("%d bytes in %d output events", r.out.Len(), outputs)
}
