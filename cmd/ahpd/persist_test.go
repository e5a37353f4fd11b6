//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/internal/syncbuf"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store/sqlite"
)

// init keeps the package's tests away from the user's data directory:
// runs without --data-dir use a data home of this process under the
// temporary directory, created only if a test uses it. (TestMain belongs to
// agents_test.go.)
func init() {
	os.Setenv("XDG_DATA_HOME", filepath.Join(os.TempDir(), fmt.Sprintf("ahpd-test-data-%d", os.Getpid())))
}

func TestStoreFlags(t *testing.T) {
	cfg, err := parseConfig(nil, io.Discard)
	if err != nil || cfg.Store != "sqlite" || cfg.DataDir != "" {
		t.Fatalf("defaults: %+v, %v", cfg.storeConfig, err)
	}
	file := filepath.Join(t.TempDir(), "ahpd.json")
	os.WriteFile(file, []byte(`{"store":"memory","dataDir":"/from/file"}`), 0o600)
	cfg, err = parseConfig([]string{"--config", file, "--data-dir", "/from/flag"}, io.Discard)
	if err != nil || cfg.Store != "memory" || cfg.DataDir != "/from/flag" {
		t.Fatalf("file then flag: %+v, %v", cfg.storeConfig, err)
	}
	if _, err := parseConfig([]string{"--store", "postgres"}, io.Discard); err == nil {
		t.Fatal("an unknown store was accepted")
	}
	for _, tc := range []struct {
		flag string
		want time.Duration
		ok   bool
	}{
		{"", host.DefaultSaveWindow, true},
		{"0s", -1, true}, // the host's "write at once"
		{"20ms", 20 * time.Millisecond, true},
		{"-1ms", 0, false},
		{"2s", 0, false},
		{"soon", 0, false},
	} {
		args := []string{}
		if tc.flag != "" {
			args = []string{"--save-window", tc.flag}
		}
		cfg, err := parseConfig(args, io.Discard)
		if (err == nil) != tc.ok {
			t.Errorf("--save-window %q: error %v, want ok=%v", tc.flag, err, tc.ok)
			continue
		}
		if err == nil && cfg.saveWindow() != tc.want {
			t.Errorf("--save-window %q: window %v, want %v", tc.flag, cfg.saveWindow(), tc.want)
		}
	}
	dir, err := defaultDataDir()
	if err != nil || dir != filepath.Join(os.Getenv("XDG_DATA_HOME"), "ahpd") {
		t.Fatalf("default data dir %q, %v", dir, err)
	}
	if cfg, err := parseConfig(nil, io.Discard); err != nil || cfg.SpareProcs != defaultSpareProcs {
		t.Fatalf("--spare-procs by default: %+v, %v", cfg.storeConfig, err)
	}
	if cfg, err := parseConfig([]string{"--spare-procs", "0"}, io.Discard); err != nil || cfg.SpareProcs != 0 {
		t.Fatalf("--spare-procs 0: %+v, %v", cfg.storeConfig, err)
	}
	for _, bad := range []string{"-1", "17", "two"} {
		if _, err := parseConfig([]string{"--spare-procs", bad}, io.Discard); err == nil {
			t.Errorf("--spare-procs %s was accepted", bad)
		}
	}
	if cfg, err := parseConfig(nil, io.Discard); err != nil || cfg.StoreReadShare != host.DefaultStoreReadShare {
		t.Fatalf("--store-read-share by default: %+v, %v", cfg.storeConfig, err)
	}
	if cfg, err := parseConfig([]string{"--store-read-share", "1"}, io.Discard); err != nil || cfg.StoreReadShare != 1 {
		t.Fatalf("--store-read-share 1: %+v, %v", cfg.storeConfig, err)
	}
	for _, bad := range []string{"0", "-0.5", "1.5", "NaN", "half"} {
		if _, err := parseConfig([]string{"--store-read-share", bad}, io.Discard); err == nil {
			t.Errorf("--store-read-share %s was accepted", bad)
		}
	}
	for _, tc := range []struct {
		flag string
		ok   bool
	}{
		{"", true}, {"0s", true}, {"1m", true}, {"1s", true},
		{"500ms", false}, {"-1m", false}, {"often", false},
	} {
		args := []string{}
		if tc.flag != "" {
			args = []string{"--backup-interval", tc.flag}
		}
		cfg, err := parseConfig(args, io.Discard)
		if (err == nil) != tc.ok {
			t.Errorf("--backup-interval %q: error %v, want ok=%v", tc.flag, err, tc.ok)
		}
		if tc.flag == "" && err == nil && cfg.BackupInterval != sqlite.DefaultBackupInterval.String() {
			t.Errorf("--backup-interval by default: %q", cfg.BackupInterval)
		}
	}
}

// TestSpareProcs: spare processors are added and taken back, and a
// GOMAXPROCS set in the environment is left alone.
func TestSpareProcs(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	t.Setenv("GOMAXPROCS", "")
	restore := spareProcs(2)
	if got := runtime.GOMAXPROCS(0); got != procs+2 {
		t.Errorf("GOMAXPROCS %d with two spare processors, want %d", got, procs+2)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Fatalf("GOMAXPROCS %d after taking the spares back, want %d", got, procs)
	}
	t.Setenv("GOMAXPROCS", fmt.Sprint(procs))
	restore = spareProcs(2)
	got := runtime.GOMAXPROCS(0)
	restore()
	if got != procs {
		t.Fatalf("GOMAXPROCS %d, set to %d in the environment", got, procs)
	}
}

// TestStartFailures: a store ahpd cannot use stops it at start with one
// clear line.
func TestStartFailures(t *testing.T) {
	corrupt := t.TempDir()
	os.WriteFile(filepath.Join(corrupt, sqlite.DBFile), bytes.Repeat([]byte("garbage "), 1000), 0o600)
	locked := t.TempDir()
	st, err := sqlite.Open(locked, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct{ dir, want string }{
		{corrupt, "store corrupt"},
		{locked, "in use by another process"},
		{filepath.Join(file, "sub"), "cannot create the data directory"},
	} {
		err := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--data-dir", tc.dir}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--data-dir %s: %v, want one line with %q", tc.dir, err, tc.want)
		}
	}
}

// ahpdProc is ahpd running as a subprocess.
type ahpdProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncbuf.Buffer
	exited chan struct{} // closed when the process has exited
	err    error         // how it exited, set before exited is closed
}

// buildAhpd builds this command into a temporary directory.
func buildAhpd(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build ahpd with")
	}
	bin := filepath.Join(t.TempDir(), "ahpd")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	out, err := exec.Command(goTool, append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func startAhpd(t *testing.T, bin string, args ...string) *ahpdProc {
	t.Helper()
	p := &ahpdProc{cmd: exec.Command(bin, append([]string{"--listen", "127.0.0.1:0", "--log-level", "info"}, args...)...), stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("ahpd stderr:\n%s", p.stderr)
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-lines:
		url, ok := strings.CutPrefix(strings.TrimSpace(line), "ahpd listening on ")
		if !ok {
			t.Fatalf("ahpd printed %q; stderr:\n%s", line, p.stderr)
		}
		p.url = url
	case <-time.After(20 * time.Second):
		t.Fatalf("ahpd did not start; stderr:\n%s", p.stderr)
	}
	return p
}

// wsClient is the shared bare test client, initialized, with the helpers
// of these tests.
type wsClient struct{ *hosttest.Client }

func dialAhpd(t *testing.T, url, id string) *wsClient {
	t.Helper()
	c := &wsClient{hosttest.Dial(t, url, id)}
	var res protocol.InitializeResult
	c.must("initialize", &protocol.InitializeParams{ProtocolVersions: protocol.SupportedVersions(), ClientID: id}, &res)
	return c
}

func (c *wsClient) must(method string, params, result any) {
	c.T.Helper()
	c.Must(method, params, result)
}

func (c *wsClient) subscribe(uri string) protocol.SnapshotState {
	c.T.Helper()
	return c.Subscribe(uri).State
}

func (c *wsClient) startTurn(chat, id, text string) {
	c.T.Helper()
	c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(time.Now()), Message: hosttest.UserMessage(text)})
}

func (c *wsClient) waitFor(what string, cond func([]protocol.ActionEnvelope) bool) []protocol.ActionEnvelope {
	c.T.Helper()
	return c.WaitFor(what, cond)
}

func count(chat, typ string) func([]protocol.ActionEnvelope) int {
	return func(envs []protocol.ActionEnvelope) int {
		n := 0
		for _, e := range envs {
			if e.Channel == chat && e.Action.Type() == typ {
				n++
			}
		}
		return n
	}
}

func encodeJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := protocol.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCrashAndRestart runs ahpd as a subprocess on a temporary data
// directory, creates sessions and completes turns, kills it with SIGKILL
// in the middle of a streaming turn, starts it again, and checks that
// everything acknowledged before the kill is back, the interrupted turn
// has failed, and serverSeq kept increasing.
func TestCrashAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs ahpd")
	}
	bin := buildAhpd(t)
	dir := t.TempDir()
	p := startAhpd(t, bin, "--data-dir", dir)
	c := dialAhpd(t, p.url, "crash-test")

	// Three sessions with two completed turns each, and a second chat.
	var sessions, chats []string
	for i := range 3 {
		uri := protocol.SessionURI(fmt.Sprintf("crash-%d", i))
		c.must("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
		chat := *c.subscribe(uri).(*protocol.SessionState).DefaultChat
		c.subscribe(chat)
		for j := range 2 {
			c.startTurn(chat, fmt.Sprintf("s%d-t%d", i, j), fmt.Sprintf("turn %d of session %d", j, i))
			c.waitFor("a turn", func(envs []protocol.ActionEnvelope) bool { return count(chat, "chat/turnComplete")(envs) == j+1 })
		}
		sessions, chats = append(sessions, uri), append(chats, chat)
	}
	extra := protocol.ChatURI("crash-extra")
	c.must("createChat", &protocol.CreateChatParams{Channel: sessions[0], Chat: extra}, nil)

	// A slow turn streams; once some deltas have arrived, listSessions
	// acknowledges everything seen so far as saved.
	slow := chats[1]
	c.startTurn(slow, "slow", "/slow 400")
	slowDeltas := func(envs []protocol.ActionEnvelope) int {
		n := 0
		for _, e := range envs {
			if d, ok := e.Action.(*protocol.ChatDeltaAction); ok && d.TurnID == "slow" {
				n++
			}
		}
		return n
	}
	c.waitFor("deltas", func(envs []protocol.ActionEnvelope) bool { return slowDeltas(envs) >= 5 })
	var before protocol.ListSessionsResult
	c.must("listSessions", &protocol.ListSessionsParams{}, &before)
	envs := c.waitFor("", func([]protocol.ActionEnvelope) bool { return true })
	acked := slowDeltas(envs)
	var lastSeq int64
	for _, e := range envs {
		lastSeq = max(lastSeq, e.ServerSeq)
	}
	completed := map[string]string{}
	for _, chat := range []string{chats[0], chats[2]} {
		completed[chat] = encodeJSON(t, c.subscribe(chat).(*protocol.ChatState).Turns)
	}

	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited

	p2 := startAhpd(t, bin, "--data-dir", dir)
	c2 := dialAhpd(t, p2.url, "after-crash")
	var after protocol.ListSessionsResult
	c2.must("listSessions", &protocol.ListSessionsParams{}, &after)
	if len(after.Items) != 3 {
		t.Fatalf("%d sessions after the crash, want 3", len(after.Items))
	}
	createdAt := map[string]string{}
	for _, s := range before.Items {
		createdAt[s.Resource] = s.CreatedAt
	}
	for _, s := range after.Items {
		if createdAt[s.Resource] != s.CreatedAt {
			t.Fatalf("%s: createdAt %q after the crash, %q before", s.Resource, s.CreatedAt, createdAt[s.Resource])
		}
	}
	for chat, want := range completed {
		if got := encodeJSON(t, c2.subscribe(chat).(*protocol.ChatState).Turns); got != want {
			t.Fatalf("%s: turns differ after the crash:\nbefore %s\nafter  %s", chat, want, got)
		}
	}
	if st := c2.subscribe(sessions[0]).(*protocol.SessionState); len(st.Chats) != 2 {
		t.Fatalf("session 0 has %d chats after the crash, want 2", len(st.Chats))
	}
	cs := c2.subscribe(slow).(*protocol.ChatState)
	if cs.ActiveTurn != nil || len(cs.Turns) != 3 {
		t.Fatalf("the slow chat after the crash: active %v, %d turns", cs.ActiveTurn, len(cs.Turns))
	}
	ended := cs.Turns[2]
	if ended.ID != "slow" || ended.State != protocol.TurnStateError || ended.ErrorInfo() == nil || ended.ErrorInfo().ErrorType != "hostRestart" {
		t.Fatalf("the interrupted turn: %+v", ended)
	}
	text := ended.ResponseParts[0].(*protocol.MarkdownResponsePart).Content.String()
	if n := len(strings.Fields(text)); n < acked {
		t.Fatalf("the interrupted turn kept %d words; %d deltas were acknowledged: %s", n, acked, encodeJSON(t, ended))
	}

	// serverSeq went on above every value seen before the kill.
	var snap protocol.SubscribeResult
	c2.must("subscribe", &protocol.SubscribeParams{Channel: chats[2]}, &snap)
	if snap.Snapshot.FromSeq <= lastSeq {
		t.Fatalf("serverSeq %d after the crash, not above %d", snap.Snapshot.FromSeq, lastSeq)
	}
	c2.startTurn(chats[2], "after", "after the crash")
	for _, e := range c2.waitFor("a turn after the crash", func(envs []protocol.ActionEnvelope) bool { return count(chats[2], "chat/turnComplete")(envs) == 1 }) {
		if e.ServerSeq <= lastSeq {
			t.Fatalf("serverSeq %d after the crash, not above %d", e.ServerSeq, lastSeq)
		}
	}

	// A second ahpd on the same directory refuses to start.
	out, err := exec.Command(bin, "--listen", "127.0.0.1:0", "--data-dir", dir).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), "in use by another process") {
		t.Fatalf("a second ahpd on the same data dir: %v\n%s", err, out)
	}

	// A clean stop.
	p2.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p2.exited:
		if p2.err != nil {
			t.Fatalf("ahpd exited with %v", p2.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("ahpd did not stop on SIGTERM")
	}
}
