//go:build unix

package acp_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/protocol"
)

// TestDisposeDuringStart: disposing a session whose agent is still
// starting (it never answers initialize) stops the agent at once.
func TestDisposeDuringStart(t *testing.T) {
	// The agent writes its pid into a named pipe: reading it waits for the
	// agent to start.
	pidFile := filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(pidFile, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := acp.New(acp.Config{Name: "hung", Command: "sh", Args: []string{"-c", "echo $$ > " + pidFile + "; exec sleep 600"}},
		&acp.Options{Logger: testLogger(t), StartTimeout: 10 * time.Minute, ExitGrace: testExitGrace})
	if err != nil {
		t.Fatal(err)
	}
	th := startHost(t, b)
	c := th.dial(t, "c")
	sess := protocol.SessionURI("s1")
	c.Must("createSession", &protocol.CreateSessionParams{Channel: sess, Provider: protocol.Ptr("hung"), WorkingDirectories: []string{"file://" + t.TempDir()}}, nil)
	read := make(chan []byte, 1)
	go func() {
		data, _ := os.ReadFile(pidFile) // returns once the agent wrote and closed it
		read <- data
	}()
	var data []byte
	select {
	case data = <-read:
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(pidFile, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close() // lets the reader return
		}
		t.Fatal("the agent did not start")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid %q: %v", data, err)
	}
	c.Must("disposeSession", &protocol.DisposeSessionParams{Channel: sess}, nil)
	if !exits(t, pid, 10*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the starting agent outlived its disposed session")
	}
}
