package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func fixedClock() time.Time { return time.UnixMilli(1_700_000_000_000) }

// buffer is a bytes.Buffer safe for the writes of concurrent goroutines.
type buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed and replaced on every write
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.b.Write(p)
}

// wait returns the text so far and a channel closed at the next write.
func (b *buffer) wait() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written == nil {
		b.written = make(chan struct{})
	}
	return b.b.String(), b.written
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// harness runs the command against an in-process host, with made-up IDs
// and a fixed clock, for the host and for the agent's turn durations (a
// turn's end time is its start plus its duration), so that its output is
// the same every time.
type harness struct {
	t   *testing.T
	url string
	mu  sync.Mutex
	ids int
}

func newHarness(t *testing.T, opts *host.WebSocketOptions) *harness {
	var hostIDs atomic.Int64
	h, err := host.New(&host.Options{
		Now:    fixedClock,
		NewID:  func() string { return fmt.Sprintf("host-%d", hostIDs.Add(1)) },
		Agents: []agent.Backend{echo.New(&echo.Options{WordDelay: -1, SlowDelay: 2 * time.Millisecond, Now: fixedClock})},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.WebSocketHandler(opts))
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return &harness{t: t, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

func (h *harness) newID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", h.ids)
}

type result struct {
	code           int
	stdout, stderr string
}

// invocation is one run of the command.
type invocation struct {
	args     []string
	stdin    io.Reader
	env      *env
	out, err *buffer
}

func (h *harness) cmd(stdin string, args ...string) *invocation {
	inv := &invocation{args: args, stdin: strings.NewReader(stdin), out: &buffer{}, err: &buffer{}}
	// An empty data home: no local ahpd's token or URL.
	dataHome := h.t.TempDir()
	inv.env = &env{
		stdin: inv.stdin, stdout: inv.out, stderr: inv.err,
		getenv: func(k string) string {
			switch k {
			case "AHP_URL":
				return h.url
			case "XDG_DATA_HOME":
				return dataHome
			}
			return ""
		},
		newID: h.newID,
		now:   fixedClock,
		loc:   time.UTC,
		tick:  time.Hour,
	}
	return inv
}

func (inv *invocation) run(t *testing.T) result {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := run(ctx, inv.args, inv.env)
	return result{code, inv.out.String(), inv.err.String()}
}

var durations = regexp.MustCompile(`"duration":[0-9.]+`)

// golden compares a result with testdata/name.golden.
func (h *harness) golden(name string, r result) {
	h.t.Helper()
	got := fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
	got = strings.ReplaceAll(got, h.url, "URL")
	got = durations.ReplaceAllString(got, `"duration":D`)
	got = mergeText(got)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		h.t.Errorf("%s differs from %s (-want +got):\n%s", name, path, diff)
	}
}

// TestGolden runs a scripted series of commands against one host; each
// step's exit code and output must match its golden file.
func TestGolden(t *testing.T) {
	h := newHarness(t, nil)
	const id = "{id}" // the session that "new" creates
	steps := []struct {
		name  string
		stdin string
		tty   bool
		args  []string
	}{
		{"sessions-empty", "", false, []string{"sessions"}},
		{"new", "", false, []string{"new"}},
		{"send", "", false, []string{"send", "00000000-0000-4000-8000-000000000003", "hello world"}},
		{"send-json", "", false, []string{"--json", "send", id, "two words"}},
		{"send-stdin", "from a pipe\n", false, []string{"send", id, "-"}},
		{"send-tool-refused", "", false, []string{"send", id, "/tool x"}},
		{"send-tool-yes", "", false, []string{"send", "--yes", id, "/tool y"}},
		{"send-tool-asked", "y\n", true, []string{"send", id, "/tool z"}},
		{"send-input-refused", "", false, []string{"send", id, "/input Favourite colour?"}},
		{"send-input-asked", "blue\n", true, []string{"send", id, "/input Favourite colour?"}},
		{"send-think", "", false, []string{"send", id, "/think carefully"}},
		{"send-error", "", false, []string{"send", id, "/error"}},
		{"send-flaky", "", false, []string{"send", id, "/flaky later"}},
		// The first turn streams for about 80 ms, so the second line always
		// arrives while it runs and is queued.
		{"chat", "/slow 40\nsecond line\n", false, []string{"chat", id}},
		{"new-json", "", false, []string{"new", "--json", "--cwd", "/tmp"}},
		{"sessions", "", false, []string{"sessions"}},
		{"sessions-json", "", false, []string{"sessions", "--json"}},
		{"send-ambiguous", "", false, []string{"send", "0000", "hi"}},
		{"agents", "", false, []string{"agents"}},
		{"agents-json", "", false, []string{"agents", "--json"}},
		{"rename", "", false, []string{"rename", id, "A **new** title"}},
		{"archive", "", false, []string{"archive", id}},
		{"sessions-archived", "", false, []string{"sessions"}},
		{"unarchive", "", false, []string{"archive", "--undo", id}},
		{"show", "", false, []string{"show", id}},
		{"rm", "", false, []string{"rm", id}},
		{"rm-missing", "", false, []string{"rm", id}},
		{"send-missing", "", false, []string{"send", "ahp-session:/nope", "hi"}},
		{"usage", "", false, nil},
		{"version-flag", "", false, []string{"--version"}},
		{"help-top", "", false, []string{"--help"}},
		{"usage-unknown", "", false, []string{"frobnicate"}},
		{"usage-args", "", true, []string{"send", id}},
		{"help", "", false, []string{"send", "-h"}},
		{"new-unknown-provider", "", false, []string{"new", "--provider", "nope"}},
		{"new-missing-cwd", "", false, []string{"new", "--cwd", "/nonexistent"}},
		{"send-missing-id", "", false, []string{"send", "nope", "hi"}},
		{"send-input-piped", "green\n", false, []string{"send", "{id2}", "/input Favourite colour?"}},
		{"send-input-stdin-prompt", "/input Favourite colour?\n", false, []string{"send", "{id2}", "-"}},
	}
	var created, second string // the second survives "rm"
	for _, s := range steps {
		args := make([]string, len(s.args))
		for i, a := range s.args {
			args[i] = strings.ReplaceAll(strings.ReplaceAll(a, id, created), "{id2}", second)
		}
		inv := h.cmd(s.stdin, args...)
		inv.env.stdinTTY = s.tty
		r := inv.run(t)
		switch s.name {
		case "new":
			created = strings.TrimSpace(r.stdout)
		case "new-json":
			var out struct{ ID string }
			json.Unmarshal([]byte(r.stdout), &out)
			second = out.ID
		}
		h.golden(s.name, r)
	}
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// TestMarkdownOnTerminal: a reply's markdown is rendered on a terminal
// (no asterisks, fences or table pipes left) and printed as written when
// piped.
func TestMarkdownOnTerminal(t *testing.T) {
	h := newHarness(t, nil)
	id := strings.TrimSpace(h.cmd("", "new").run(t).stdout)
	const prompt = "some **bold** and `code`"
	inv := h.cmd("", "send", id, prompt)
	inv.env.stdoutTTY, inv.env.color = true, true
	r := inv.run(t)
	out := ansi.ReplaceAllString(r.stdout, "")
	if r.code != 0 || strings.Contains(out, "**") || strings.Contains(out, "`") || !strings.Contains(out, "bold") || !strings.Contains(out, "code") {
		t.Errorf("on a terminal: exit %d, stdout %q", r.code, out)
	}
	if r.stdout == out {
		t.Errorf("on a terminal the reply has no styling: %q", r.stdout)
	}
	r = h.cmd("", "send", id, prompt).run(t)
	if r.code != 0 || r.stdout != "You said: "+prompt+"\n" {
		t.Errorf("piped: exit %d, stdout %q", r.code, r.stdout)
	}
	// show prints the transcript, rendered alike.
	inv = h.cmd("", "show", id)
	inv.env.stdoutTTY, inv.env.color = true, true
	r = inv.run(t)
	out = ansi.ReplaceAllString(r.stdout, "")
	if r.code != 0 || !strings.Contains(out, "» "+prompt) || !regexp.MustCompile(`You said: some bold and +code`).MatchString(out) {
		t.Errorf("show on a terminal: exit %d, stdout %q", r.code, out)
	}
}

// TestCompletion: the scripts list every command and are valid shell
// (bash checks its own; zsh and fish when installed).
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		inv := (&harness{t: t}).cmd("", "completion", sh)
		r := inv.run(t)
		if r.code != 0 {
			t.Fatalf("completion %s: exit %d: %s", sh, r.code, r.stderr)
		}
		for _, c := range commands {
			if !strings.Contains(r.stdout, c.name) {
				t.Errorf("the %s script lacks %s", sh, c.name)
			}
		}
		exe, err := exec.LookPath(sh)
		if err != nil {
			if sh == "bash" {
				t.Fatalf("bash not found: %v", err)
			}
			continue
		}
		flag := "-n"
		if sh == "fish" {
			flag = "--no-execute"
		}
		script := filepath.Join(t.TempDir(), "ahp."+sh)
		os.WriteFile(script, []byte(r.stdout), 0o644)
		if out, err := exec.Command(exe, flag, script).CombinedOutput(); err != nil {
			t.Errorf("%s rejects its script: %v\n%s", sh, err, out)
		}
	}
	if r := (&harness{t: t}).cmd("", "completion", "tcsh").run(t); r.code != exitUsage {
		t.Errorf("completion tcsh: exit %d, want %d", r.code, exitUsage)
	}
}

// TestColouredErrors: on a terminal that takes colour an error's prefix is
// red; piped, or with NO_COLOR, it is plain.
func TestColouredErrors(t *testing.T) {
	h := newHarness(t, nil)
	for _, tc := range []struct {
		color bool
		want  string
	}{
		{true, "\x1b[1;31mahp send:\x1b[0m no such session: nope\n"},
		{false, "ahp send: no such session: nope\n"},
	} {
		inv := h.cmd("", "send", "nope", "hi")
		inv.env.errColor = tc.color
		r := inv.run(t)
		if r.code != exitNotFound || r.stderr != tc.want {
			t.Errorf("colour %v: exit %d, stderr %q; want %d, %q", tc.color, r.code, r.stderr, exitNotFound, tc.want)
		}
	}
}

func TestConnectionFailures(t *testing.T) {
	h := newHarness(t, &host.WebSocketOptions{Token: "secret"})
	inv := h.cmd("", "sessions")
	if r := inv.run(t); r.code != exitAuth {
		t.Errorf("no token: exit %d, %s", r.code, r.stderr)
	}
	inv = h.cmd("", "--token", "secret", "sessions")
	if r := inv.run(t); r.code != exitOK {
		t.Errorf("right token: exit %d, %s", r.code, r.stderr)
	}
	inv = h.cmd("", "--url", "ws://127.0.0.1:1/", "sessions")
	r := inv.run(t)
	if want := "ahp sessions: nothing is listening at ws://127.0.0.1:1/: is ahpd running? Start it with 'ahpd', or point --url (or AHP_URL) at the host\n"; r.code != exitConnection || r.stderr != want {
		t.Errorf("nothing listening: exit %d, %q, want %q", r.code, r.stderr, want)
	}
}

// TestWatch follows a chat while another command runs a turn on it.
func TestWatch(t *testing.T) {
	h := newHarness(t, nil)
	r := h.cmd("", "new").run(t)
	id := strings.TrimSpace(r.stdout)
	stop := make(chan os.Signal, 1)
	watch := h.cmd("", "watch", "--snapshot", "ahp-chat:/host-1")
	watch.env.interrupts = stop
	done := make(chan result, 1)
	go func() { done <- watch.run(t) }()
	waitFor(t, watch.err, "watching")
	if r := h.cmd("", "send", id, "hi there").run(t); r.code != 0 {
		t.Fatalf("send: %d %s", r.code, r.stderr)
	}
	waitFor(t, watch.out, "chat/turnComplete")
	stop <- os.Interrupt
	h.golden("watch", <-done)
}

// TestTwoChats has two chat commands on one session: each sees the
// other's turns as they stream.
func TestTwoChats(t *testing.T) {
	h := newHarness(t, nil)
	id := strings.TrimSpace(h.cmd("", "new").run(t).stdout)
	type side struct {
		in   *io.PipeWriter
		inv  *invocation
		done chan result
	}
	start := func() *side {
		pr, pw := io.Pipe()
		inv := h.cmd("", "chat", id)
		inv.env.stdin = pr
		s := &side{in: pw, inv: inv, done: make(chan result, 1)}
		go func() { s.done <- inv.run(t) }()
		waitFor(t, inv.err, "Chatting")
		return s
	}
	a, b := start(), start()
	io.WriteString(a.in, "from a\n")
	waitFor(t, b.inv.out, "» from a   (from another client)\nYou said: from a\n")
	waitFor(t, a.inv.out, "You said: from a\n")
	io.WriteString(b.in, "from b\n")
	waitFor(t, a.inv.out, "» from b   (from another client)\nYou said: from b\n")
	a.in.Close()
	b.in.Close()
	for _, s := range []*side{a, b} {
		if r := <-s.done; r.code != 0 {
			t.Fatalf("chat: exit %d: %s", r.code, r.stderr)
		}
	}
	if got := a.inv.out.String(); got != "You said: from a\n» from b   (from another client)\nYou said: from b\n" {
		t.Fatalf("a's transcript:\n%s", got)
	}
}

// TestStatusLine checks that a turn on a terminal shows a status line,
// and that nothing of it is left once the turn ends.
func TestStatusLine(t *testing.T) {
	h := newHarness(t, nil)
	id := strings.TrimSpace(h.cmd("", "new").run(t).stdout)
	inv := h.cmd("", "send", id, "/slow 20")
	inv.env.stdoutTTY, inv.env.stderrTTY, inv.env.color = true, true, true
	inv.env.tick = time.Millisecond
	start := time.Now()
	inv.env.now = time.Now
	r := inv.run(t)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "\x1b7") || !regexp.MustCompile(`\d\.\ds`).MatchString(r.stderr) {
		t.Fatalf("no status line drawn: %q", r.stderr)
	}
	if !strings.HasSuffix(r.stderr, "\x1b[J") {
		t.Fatalf("status line not erased at the end: %q", r.stderr[max(0, len(r.stderr)-40):])
	}
	if out := ansi.ReplaceAllString(r.stdout, ""); !strings.HasSuffix(strings.TrimRight(out, " \n"), "word20") {
		t.Fatalf("stdout %q", r.stdout)
	}
	_ = start
	// With stdout piped and stderr a terminal, the status line keeps to
	// stderr; with both piped there is none (the golden tests).
	inv = h.cmd("", "send", id, "/slow 5")
	inv.env.stderrTTY, inv.env.tick = true, time.Millisecond
	r = inv.run(t)
	if strings.Contains(r.stdout, "\x1b") || !strings.Contains(r.stderr, "\r\x1b[K") {
		t.Fatalf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
}

func waitFor(t *testing.T, b *buffer, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		text, written := b.wait()
		if strings.Contains(text, want) {
			return
		}
		select {
		case <-written:
		case <-deadline:
			t.Fatalf("never saw %q in:\n%s", want, b.String())
		}
	}
}

// mergeText joins consecutive --json text events of one part: how a reply
// is cut into events depends on timing.
func mergeText(out string) string {
	var lines []string
	var last map[string]any
	for _, line := range strings.SplitAfter(out, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) != nil || ev["type"] != "text" {
			lines, last = append(lines, line), nil
			continue
		}
		if last != nil && last["partId"] == ev["partId"] {
			last["text"] = last["text"].(string) + ev["text"].(string)
			b, _ := json.Marshal(last, json.Deterministic(true))
			lines[len(lines)-1] = string(b) + "\n"
			continue
		}
		lines, last = append(lines, line), ev
	}
	return strings.Join(lines, "")
}

// TestChatPipedQueue: lines piped into chat while a turn runs are queued,
// and every one of them runs before chat leaves at the end of input.
func TestChatPipedQueue(t *testing.T) {
	h := newHarness(t, nil)
	id := strings.TrimSpace(h.cmd("", "new").run(t).stdout)
	r := h.cmd("/slow 20\none\ntwo\nthree\n", "chat", id).run(t)
	if r.code != 0 || !strings.HasSuffix(r.stdout, "word20\nYou said: one\nYou said: two\nYou said: three\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestRemoveEndsWatchAndSend: removing a session ends a watch of it and a
// send waiting on its chat, with the not-found exit code, instead of
// leaving them waiting (chat-channel.md, Disposal: the host announces the
// removal so subscribers can release their subscriptions).
func TestRemoveEndsWatchAndSend(t *testing.T) {
	h := newHarness(t, nil)
	id := strings.TrimSpace(h.cmd("", "new").run(t).stdout)
	watch := h.cmd("", "watch", id)
	send := h.cmd("", "send", id, "/slow 100000")
	done := make(chan result, 2)
	go func() { done <- watch.run(t) }()
	waitFor(t, watch.err, "watching")
	go func() { done <- send.run(t) }()
	waitFor(t, watch.out, "session/chatUpdated") // the turn runs
	if r := h.cmd("", "rm", id).run(t); r.code != 0 {
		t.Fatalf("rm: %d %s", r.code, r.stderr)
	}
	for range 2 {
		select {
		case r := <-done:
			if r.code != exitNotFound {
				t.Errorf("exit %d, want %d; stderr %s", r.code, exitNotFound, r.stderr)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a command still waits on the removed session")
		}
	}
}
