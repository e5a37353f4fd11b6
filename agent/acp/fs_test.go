//go:build unix

package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFileEdges: a FIFO in the working directory is refused at once
// instead of blocking the turn, and so is a device; a hard link to a file
// outside the working directory is neither read nor written through.
func TestFileEdges(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	must(t, os.WriteFile(secret, []byte("secret"), 0o644))
	must(t, os.Link(secret, filepath.Join(dir, "hard.txt")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("plain"), 0o644))
	device := os.Geteuid() == 0 && syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o644, 1<<8|3) == nil

	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", dir)
	lines := []string{
		"read " + filepath.Join(dir, "fifo"),
		"write " + filepath.Join(dir, "fifo") + " x",
		"read " + filepath.Join(dir, "hard.txt"),
		"write " + filepath.Join(dir, "hard.txt") + " overwritten",
		"read " + filepath.Join(dir, "plain.txt"),
		"write " + filepath.Join(dir, "plain.txt") + " rewritten",
		"read " + filepath.Join(dir, "plain.txt"),
	}
	if device {
		lines = append(lines, "read "+filepath.Join(dir, "null"), "write "+filepath.Join(dir, "null")+" x")
	}
	turn := a.startTurn(chat, "t1", strings.Join(lines, "\n"))
	a.waitTurnEnd(turn)
	got := markdown(finishedTurn(t, th.chatState(t, chat), turn).ResponseParts)
	want := []string{
		"fifo is not a regular file (a named pipe)",
		"hard.txt has 2 hard links",
		"plain",
		"wrote " + filepath.Join(dir, "plain.txt"),
		"rewritten",
	}
	if device {
		want = append(want, "null is not a regular file (a device)")
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("reply lacks %q:\n%s", w, got)
		}
	}
	if n, wantN := strings.Count(got, "error"), 4; device && n != wantN+2 || !device && n != wantN {
		t.Errorf("%d refusals:\n%s", n, got)
	}
	if strings.Contains(got, "secret") {
		t.Errorf("the outside file was read through its hard link:\n%s", got)
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Errorf("the outside file was written through its hard link: %q", b)
	}
}
