//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store/sqlite"
)

// TestTruncatedUnderAhpd is the audit's failure, end to end: the
// write-ahead log and the database are truncated under a running ahpd.
// ahpd logs it and refuses new work instead of acknowledging it; after a
// kill -9 and a restart, the backup taken at the previous clean stop is
// restored, every session it holds is served, and the log says what was
// lost.
func TestTruncatedUnderAhpd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs ahpd")
	}
	bin := buildAhpd(t)
	dir := t.TempDir()
	p := startAhpd(t, bin, "--data-dir", dir)
	c := dialAhpd(t, p.url, "before")
	var kept []string
	for _, id := range []string{"kept-1", "kept-2", "kept-3"} {
		uri := protocol.SessionURI(id)
		c.must("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
		kept = append(kept, uri)
	}
	p.cmd.Process.Signal(syscall.SIGTERM) // a clean stop takes a backup
	<-p.exited
	if !strings.Contains(p.stderr.String(), "session store backed up") {
		t.Fatalf("no backup at the clean stop:\n%s", p.stderr)
	}

	p2 := startAhpd(t, bin, "--data-dir", dir)
	c2 := dialAhpd(t, p2.url, "during")
	c2.must("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("after-the-backup")}, nil)
	db := filepath.Join(dir, sqlite.DBFile)
	if err := os.Truncate(db+"-wal", 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	// The first change after the damage finds it; from then on nothing
	// is acknowledged.
	c2.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("unsaved")}, nil)
	for deadline := time.Now().Add(10 * time.Second); ; {
		err := c2.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("refused")}, nil)
		if err != nil && strings.Contains(err.Error(), "cannot save changes") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("createSession after the damage: %v", err)
		}
		c2.Call("listSessions", &protocol.ListSessionsParams{}, nil) // waits for the save
	}
	if log := p2.stderr.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "truncated") {
		t.Fatalf("the damage is not logged:\n%s", log)
	}
	p2.cmd.Process.Signal(syscall.SIGKILL)
	<-p2.exited

	p3 := startAhpd(t, bin, "--data-dir", dir)
	if log := p3.stderr.String(); !strings.Contains(log, "restored from its backup") || !strings.Contains(log, "lost=") {
		t.Fatalf("the restore is not logged:\n%s", log)
	}
	c3 := dialAhpd(t, p3.url, "after")
	var after protocol.ListSessionsResult
	c3.must("listSessions", &protocol.ListSessionsParams{}, &after)
	served := map[string]bool{}
	for _, s := range after.Items {
		served[s.Resource] = true
	}
	for _, uri := range kept {
		if !served[uri] {
			t.Fatalf("%s is not served after the restore (catalog %v)", uri, served)
		}
	}
	if served[protocol.SessionURI("refused")] {
		t.Fatal("a session refused after the damage is served")
	}
	aside, _ := filepath.Glob(filepath.Join(dir, "ahpd-damaged-*.db"))
	if len(aside) != 1 {
		t.Fatalf("damaged files kept aside: %v", aside)
	}
}
