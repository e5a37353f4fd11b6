//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
)

// vt is a small terminal emulator: the part of a VT100 that ahp writes
// (text, CR, LF, ESC 7/8 save and restore, ESC D/M index and reverse
// index, CSI K and J erase; colours ignored), so that a test can read the
// screen a user would see rather than the bytes.
type vt struct {
	mu       sync.Mutex
	w, h     int
	rows     [][]rune
	x, y     int
	sx, sy   int
	pending  []byte        // an unfinished escape sequence or UTF-8 rune
	changed  chan struct{} // closed and replaced at every write
	scrolled []string      // lines that left the top of the screen
}

func newVT(w, h int) *vt {
	t := &vt{w: w, h: h, changed: make(chan struct{})}
	for range h {
		t.rows = append(t.rows, t.blank())
	}
	return t
}

func (t *vt) blank() []rune { return []rune(strings.Repeat(" ", t.w)) }

func (t *vt) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := append(t.pending, p...)
	t.pending = nil
	i := 0
	for i < len(buf) {
		n := t.step(buf[i:])
		if n == 0 { // incomplete: wait for more
			t.pending = append([]byte(nil), buf[i:]...)
			break
		}
		i += n
	}
	close(t.changed)
	t.changed = make(chan struct{})
	return len(p), nil
}

// step interprets the start of b and returns how many bytes it used, 0
// when b holds only the start of a sequence.
func (t *vt) step(b []byte) int {
	switch c := b[0]; {
	case c == 0x1b:
		if len(b) < 2 {
			return 0
		}
		switch b[1] {
		case '7':
			t.sx, t.sy = t.x, t.y
		case '8':
			t.x, t.y = t.sx, t.sy
		case 'D':
			t.index()
		case 'M':
			if t.y > 0 {
				t.y--
			} else {
				t.rows = append([][]rune{t.blank()}, t.rows[:t.h-1]...)
			}
		case '[':
			j := 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			if j == len(b) {
				return 0
			}
			t.csi(string(b[2:j]), b[j])
			return j + 1
		}
		return 2
	case c == '\r':
		t.x = 0
	case c == '\n':
		t.index()
	case c == '\b':
		t.x = max(0, t.x-1)
	case c == '\t':
		t.x = min(t.w-1, (t.x/8+1)*8)
	case c < 0x20:
	default:
		if !utf8.FullRune(b) {
			return 0
		}
		r, n := utf8.DecodeRune(b)
		if t.x >= t.w {
			t.x = 0
			t.index()
		}
		t.rows[t.y][t.x] = r
		t.x++
		return n
	}
	return 1
}

func (t *vt) index() {
	if t.y < t.h-1 {
		t.y++
		return
	}
	t.scrolled = append(t.scrolled, strings.TrimRight(string(t.rows[0]), " "))
	t.rows = append(t.rows[1:], t.blank())
	// As in real terminals, the saved cursor position stays where it was
	// on the screen: ahp makes room before saving it.
}

func (t *vt) csi(params string, final byte) {
	x := min(t.x, t.w)
	switch final {
	case 'K':
		switch params {
		case "", "0":
			copy(t.rows[t.y][x:], t.blank()[x:])
		case "2":
			t.rows[t.y] = t.blank()
		}
	case 'J':
		if params == "" || params == "0" {
			copy(t.rows[t.y][x:], t.blank()[x:])
			for y := t.y + 1; y < t.h; y++ {
				t.rows[y] = t.blank()
			}
		}
	}
}

// screen returns the lines on screen, without trailing spaces and empty
// lines at the bottom, after the lines scrolled off the top.
func (t *vt) screen() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := append([]string(nil), t.scrolled...)
	for _, r := range t.rows {
		lines = append(lines, strings.TrimRight(string(r), " "))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// waitScreen waits until the screen satisfies ok.
func (t *vt) waitScreen(tb testing.TB, what string, ok func(lines []string) bool) {
	tb.Helper()
	deadline := time.After(15 * time.Second)
	for {
		t.mu.Lock()
		ch := t.changed
		t.mu.Unlock()
		if ok(t.screen()) {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			tb.Fatalf("never saw %s on the terminal:\n%s", what, strings.Join(t.screen(), "\n"))
		}
	}
}

func lastLine(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

func hasLine(lines []string, f func(string) bool) bool {
	for _, l := range lines {
		if f(l) {
			return true
		}
	}
	return false
}

// TestChatOnTerminal runs ahp chat on a pseudo-terminal, with another
// client in the same chat, and reads the screen: a restored draft is shown
// on the input line as editable text (so typing a command is not silently
// appended to it), the draft follows the other client, turns from the
// other client never land on the input line, the prompt comes back after
// each reply, and a question answered elsewhere goes away without eating
// the next line.
func TestChatOnTerminal(t *testing.T) {
	h := newHarness(t, nil)
	id := strings.TrimSpace(h.cmd("", "new").run(t).stdout)
	other := hosttest.Dial(t, h.url, "other")
	other.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "other"}, nil)
	sess := other.Subscribe("echo:/" + id).State.(*protocol.SessionState) // ahp names sessions <provider>:/<id>
	chat := *sess.DefaultChat
	other.Subscribe(chat)
	other.Dispatch(chat, &protocol.ChatDraftChangedAction{Draft: &protocol.Message{Text: "like a person would", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}})
	other.WaitFor("the draft applied", hosttest.HasType("chat/draftChanged"))

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	// Terminal requests go through a second descriptor of the terminal:
	// asking a file for its descriptor makes its reads block for good,
	// and chat's reading goroutine must end when the terminal closes.
	ctl, err := os.OpenFile(tty.Name(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close(); ctl.Close() })
	if err := pty.Setsize(ctl, &pty.Winsize{Rows: 30, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	term := newVT(120, 30)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(term, ptmx) // ends when the terminal closes
	}()

	inv := h.cmd("", "chat", id)
	e := inv.env
	e.stdin, e.stdout, e.stderr = tty, tty, tty
	e.stdinTTY, e.stdoutTTY, e.stderrTTY = true, true, true
	e.cbreak = func() (func(), error) { return setCbreak(ctl) }
	e.width = func() int { return termWidth(ctl) }
	e.draftDelay = 10 * time.Millisecond
	done := make(chan result, 1)
	go func() { done <- inv.run(t) }()
	typeKeys := func(s string) {
		t.Helper()
		if _, err := ptmx.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}

	// The restored draft is on the input line, said to be there.
	term.waitScreen(t, "the restored draft on the input line", func(l []string) bool {
		return lastLine(l) == "> like a person would" && hasLine(l, func(s string) bool { return strings.Contains(s, "The chat's draft is on the input line") })
	})
	// The other client sends the draft (and clears it): the line follows.
	other.Dispatch(chat, &protocol.ChatDraftChangedAction{})
	term.waitScreen(t, "the input line cleared", func(l []string) bool { return lastLine(l) == ">" })

	// Something typed, then a turn of the other client's: it shows above
	// the input line, which keeps what was typed.
	typeKeys("half typ")
	other.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "turn-other", StartedAt: protocol.FormatTime(time.Now()), Message: hosttest.UserMessage("from elsewhere")})
	term.waitScreen(t, "the other client's reply above the input line", func(l []string) bool {
		return lastLine(l) == "> half typ" && hasLine(l, func(s string) bool { return s == "You said: from elsewhere" })
	})
	for _, l := range term.screen()[:len(term.screen())-1] {
		if strings.Contains(l, "half typ") {
			t.Errorf("the typed text shows outside the input line: %q", l)
		}
	}
	typeKeys("\x15") // Ctrl-U

	// A question this client asked; the other client answers it: the
	// question goes away and the next line is a message.
	typeKeys("/tool x\r")
	term.waitScreen(t, "the tool's question", func(l []string) bool { return strings.HasSuffix(lastLine(l), "[y/N]") })
	envs := other.WaitFor("the tool call", hosttest.HasType("chat/toolCallReady"))
	var ready *protocol.ChatToolCallReadyAction
	for _, env := range envs {
		if a, ok := env.Action.(*protocol.ChatToolCallReadyAction); ok {
			ready = a
		}
	}
	other.Dispatch(chat, &protocol.ChatToolCallConfirmedAction{TurnID: ready.TurnID, ToolCallID: ready.ToolCallID, Approved: true})
	term.waitScreen(t, "the question gone and the prompt back", func(l []string) bool {
		return lastLine(l) == ">" && hasLine(l, func(s string) bool { return s == "The tool said: x" }) &&
			hasLine(l, func(s string) bool { return strings.Contains(s, "answered by another client") })
	})
	typeKeys("hello\r")
	term.waitScreen(t, "the reply to the next line, and the prompt after it", func(l []string) bool {
		return lastLine(l) == ">" && hasLine(l, func(s string) bool { return s == "You said: hello" })
	})

	typeKeys("/quit\r")
	select {
	case r := <-done:
		if r.code != 0 {
			t.Fatalf("chat: exit %d\n%s", r.code, strings.Join(term.screen(), "\n"))
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("chat did not end on /quit:\n%s", strings.Join(term.screen(), "\n"))
	}
	for _, env := range other.Envelopes() {
		if a, ok := env.Action.(*protocol.ChatTurnStartedAction); ok && strings.Contains(a.Message.Text, "/quit") {
			t.Errorf("a turn was started with %q", a.Message.Text)
		}
	}
	// Closing the terminal ends chat's reading goroutine, then the copy.
	tty.Close()
	ctl.Close()
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end after it closed")
	}
	if testing.Verbose() {
		t.Logf("the terminal at the end:\n%s", strings.Join(term.screen(), "\n"))
	}
}
