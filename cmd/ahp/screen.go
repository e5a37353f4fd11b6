package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ahp-go/ahp/protocol"
)

// screen writes the transcript to stdout and keeps a status line under it
// while a turn runs, when there is a terminal to show it on.
//
// Under the transcript sits a footer: the status line while a turn runs,
// and, while chat edits the line being typed, the input line (a prompt and
// what is typed so far), with the cursor at its end.
//
// When stdout and stderr are the same terminal, the footer sits on the
// lines below the text: it is erased (ESC [J, from the saved cursor
// position where the transcript ends) before text is written and drawn
// again after, so streamed words can keep appending to a partial line and
// nothing is ever written over the line being typed. When only stderr is a
// terminal, the footer is a line of its own there.
type screen struct {
	mu       sync.Mutex // the status line and notes may come from other goroutines
	out, err io.Writer
	mode     statusMode
	dim      bool       // reasoning may be dimmed
	width    func() int // the terminal's width in columns; 0 when unknown

	status   string // the status text; "" shows none
	shown    bool   // the footer is on screen
	inFooter bool   // the cursor is on the input line, not at the transcript's end
	held     bool   // no status while asking the user something (without an input line)
	midLine  bool   // the transcript's last line is unfinished
	lastPart int    // the part the transcript last wrote to, -1 for none

	editing bool   // the input line is shown
	prompt  string // the input line's prompt: "> ", or a question
	input   string // what is typed on the input line
}

type statusMode int

const (
	noStatus  statusMode = iota
	belowText            // stdout and stderr are one terminal
	ownLine              // stderr alone is a terminal
)

func newScreen(e *env, json bool) *screen {
	s := &screen{out: e.stdout, err: e.stderr, dim: e.color && !json, lastPart: -1, width: e.width}
	switch {
	case json || !e.stderrTTY:
	case e.stdoutTTY:
		s.mode = belowText
	default:
		s.mode = ownLine
	}
	return s
}

// write appends text of part (-1 for none) to the transcript, starting a
// new line when the part changes.
func (s *screen) write(part int, text string) {
	if text == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	if part != s.lastPart && s.midLine {
		io.WriteString(s.out, "\n")
	}
	s.lastPart = part
	io.WriteString(s.out, text)
	s.midLine = !strings.HasSuffix(text, "\n")
	s.draw()
}

// line writes a line of its own to the transcript.
func (s *screen) line(text string) {
	s.write(-2, text+"\n")
	s.mu.Lock()
	s.lastPart = -1
	s.mu.Unlock()
}

// endLine finishes an unfinished line.
func (s *screen) endLine() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.midLine {
		s.erase()
		io.WriteString(s.out, "\n")
		s.midLine = false
		s.lastPart = -1
		s.draw()
	}
}

// note writes a message to stderr on a line of its own.
func (s *screen) note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	if s.midLine {
		io.WriteString(s.out, "\n")
		s.midLine = false
		s.lastPart = -1
	}
	io.WriteString(s.err, msg+"\n")
	s.draw()
}

// setStatus shows text as the status line; "" removes it.
func (s *screen) setStatus(text string) {
	if s.mode == noStatus {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	s.status = text
	s.draw()
}

// hold removes the status line until release, while the user is asked
// something on stderr.
func (s *screen) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	s.held = true
}

func (s *screen) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = false
	s.draw()
}

// edit shows the input line with prompt and text; chat calls it as the
// line is typed, and with a question's prompt while asking one.
func (s *screen) edit(prompt, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == noStatus {
		// stderr is no terminal to keep a footer on: echo as typed.
		s.editing, s.prompt, s.input = true, prompt, text
		io.WriteString(s.err, "\r\x1b[K"+prompt+text)
		return
	}
	if s.editing && s.shown && s.inFooter {
		// Only the input line changes: redraw it where the cursor is.
		s.prompt, s.input = prompt, text
		io.WriteString(s.err, "\r\x1b[K"+s.inputLine())
		return
	}
	s.erase()
	s.editing, s.prompt, s.input = true, prompt, text
	s.draw()
}

// endEdit removes the input line: the line was entered (it stays on the
// screen as typed, as the transcript's own line), or chat ends.
func (s *screen) endEdit(keep bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := s.prompt + s.input
	if s.mode == noStatus {
		if s.editing && keep {
			io.WriteString(s.err, "\n")
		}
		s.editing = false
		return
	}
	s.erase()
	s.editing = false
	if keep {
		if s.midLine {
			io.WriteString(s.out, "\n")
			s.midLine, s.lastPart = false, -1
		}
		io.WriteString(s.err, line+"\n")
	}
	s.draw()
}

// inputLine is the input line as shown: the end of what is typed, when
// the whole would wrap (a line that wraps could not be redrawn in place).
func (s *screen) inputLine() string {
	w := 0
	if s.width != nil {
		w = s.width()
	}
	if w <= 0 {
		w = 80
	}
	room := w - 1 - utf8.RuneCountInString(s.prompt)
	text := []rune(s.input)
	if room < 8 {
		room = 8
	}
	if len(text) > room {
		text = append([]rune("…"), text[len(text)-room+1:]...)
	}
	return s.prompt + string(text)
}

func (s *screen) erase() {
	if !s.shown {
		return
	}
	switch s.mode {
	case belowText:
		if s.inFooter {
			io.WriteString(s.err, "\x1b8")
		}
		io.WriteString(s.err, "\x1b[J")
	case ownLine:
		io.WriteString(s.err, "\r\x1b[K")
	}
	s.shown, s.inFooter = false, false
}

func (s *screen) draw() {
	if s.mode == noStatus {
		return
	}
	var lines []string
	if s.status != "" && (!s.held || s.editing) {
		lines = append(lines, s.status)
	}
	if s.editing {
		lines = append(lines, s.inputLine())
	}
	if len(lines) == 0 {
		return
	}
	switch s.mode {
	case belowText:
		// Make room below (scrolling if needed) without moving the
		// column, save the cursor, draw on the next lines; come back,
		// unless the cursor belongs on the input line.
		n := len(lines)
		io.WriteString(s.err, strings.Repeat("\x1bD", n)+strings.Repeat("\x1bM", n)+"\x1b7")
		for _, l := range lines {
			io.WriteString(s.err, "\x1bD\r\x1b[K"+l)
		}
		if s.editing {
			s.inFooter = true
		} else {
			io.WriteString(s.err, "\x1b8")
		}
	case ownLine:
		io.WriteString(s.err, "\r\x1b[K"+strings.Join(lines, "  "))
	}
	s.shown = true
}

// noteWriter writes each line written to it as a note on the screen, so
// that listings printed in a chat keep off the input line.
type noteWriter struct{ s *screen }

func (w noteWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.s.note(l)
	}
	return len(p), nil
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// statusText is the status line of a running turn.
func statusText(frame int, elapsed time.Duration, usage *protocol.UsageInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %.1fs", spinner[frame%len(spinner)], elapsed.Seconds())
	if usage != nil && (usage.InputTokens != nil || usage.OutputTokens != nil) {
		in, out := int64(0), int64(0)
		if usage.InputTokens != nil {
			in = *usage.InputTokens
		}
		if usage.OutputTokens != nil {
			out = *usage.OutputTokens
		}
		fmt.Fprintf(&b, " · %d tokens in, %d out", in, out)
	}
	return b.String()
}
