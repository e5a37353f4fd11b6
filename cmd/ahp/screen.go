package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// screen writes the transcript to stdout and keeps a status line under it
// while a turn runs, when there is a terminal to show it on.
//
// When stdout and stderr are the same terminal, the status line sits on
// the line below the text: it is erased (ESC [J) before text is written
// and drawn again after, from a saved cursor position, so streamed words
// can keep appending to a partial line. When only stderr is a terminal,
// the status line is a line of its own there.
type screen struct {
	mu       sync.Mutex // the status line and notes may come from other goroutines
	out, err io.Writer
	mode     statusMode
	dim      bool // reasoning may be dimmed

	status   string // the status text; "" shows none
	shown    bool
	held     bool // no status while asking the user something
	midLine  bool // the transcript's last line is unfinished
	lastPart int  // the part the transcript last wrote to, -1 for none
}

type statusMode int

const (
	noStatus  statusMode = iota
	belowText            // stdout and stderr are one terminal
	ownLine              // stderr alone is a terminal
)

func newScreen(e *env, json bool) *screen {
	s := &screen{out: e.stdout, err: e.stderr, dim: e.color && !json, lastPart: -1}
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

func (s *screen) erase() {
	if !s.shown {
		return
	}
	switch s.mode {
	case belowText:
		io.WriteString(s.err, "\x1b[J")
	case ownLine:
		io.WriteString(s.err, "\r\x1b[K")
	}
	s.shown = false
}

func (s *screen) draw() {
	if s.status == "" || s.held || s.mode == noStatus {
		return
	}
	switch s.mode {
	case belowText:
		// Make room below (scrolling if needed) without moving the
		// column, save the cursor, draw on the next line, come back.
		io.WriteString(s.err, "\x1bD\x1bM\x1b7\x1bD\r\x1b[K"+s.status+"\x1b8")
	case ownLine:
		io.WriteString(s.err, "\r\x1b[K"+s.status)
	}
	s.shown = true
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
