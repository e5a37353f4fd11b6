//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// TestLoginKeyOnTerminal: on a terminal `ahp login` asks for the key and
// reads it without echo, with Backspace and Ctrl-U editing the line.
func TestLoginKeyOnTerminal(t *testing.T) {
	h := newSignInHarness(t, filepath.Join(t.TempDir(), "marker"))
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	// Terminal requests go through a second descriptor (see
	// TestChatOnTerminal).
	ctl, err := os.OpenFile(tty.Name(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close(); ctl.Close() })
	term := newVT(100, 10)
	go io.Copy(term, ptmx) // ends when the terminal closes

	inv := h.cmd("", "login", "--method", "key", "keyed")
	e := inv.env
	e.stdin, e.stdout, e.stderr = tty, tty, tty
	e.stdinTTY, e.stdoutTTY, e.stderrTTY = true, true, true
	e.cbreak = func() (func(), error) { return setCbreak(ctl) }
	done := make(chan result, 1)
	go func() { done <- inv.run(t) }()

	term.waitScreen(t, "the key prompt", func(l []string) bool {
		return hasLine(l, func(s string) bool { return s == "API key (ACPTEST_API_KEY):" })
	})
	// A mistyped start wiped with Ctrl-U, a typo fixed with Backspace.
	if _, err := ptmx.Write([]byte("oops\x15sk-cli-42x\x7f\r")); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != exitOK {
		t.Fatalf("exit %d", r.code)
	}
	term.waitScreen(t, "the agent ready", func(l []string) bool {
		return hasLine(l, func(s string) bool { return s == "keyed: ready" })
	})
	for _, l := range term.screen() {
		if strings.Contains(l, "sk-cli") || strings.Contains(l, "oops") {
			t.Errorf("the key was echoed: %q", l)
		}
	}
}
