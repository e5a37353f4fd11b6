package main

import (
	"sync"
	"time"
	"unicode/utf8"
)

// draftDelay is how long typing must pause before the draft is synced to
// the chat: chat/draftChanged is sent once per pause, not per keystroke.
const draftDelay = 500 * time.Millisecond

// draftSync keeps the chat's draft in step with what is typed: edits are
// sent after a pause (debounced), and a message sent clears the draft.
type draftSync struct {
	delay time.Duration
	send  func(text string) // dispatches chat/draftChanged; "" clears

	mu      sync.Mutex
	timer   *time.Timer
	pending string
	synced  string // what the chat's draft holds, as far as we know
}

func newDraftSync(seed string, delay time.Duration, send func(string)) *draftSync {
	return &draftSync{delay: delay, send: send, synced: seed}
}

// typed records the input after an edit; it is synced once typing pauses.
func (d *draftSync) typed(text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending = text
	if d.timer != nil {
		d.timer.Stop()
	}
	d.timer = time.AfterFunc(d.delay, d.flush)
}

func (d *draftSync) flush() {
	d.mu.Lock()
	text := d.pending
	changed := text != d.synced
	d.synced = text
	d.timer = nil
	d.mu.Unlock()
	if changed {
		d.send(text)
	}
}

// sent clears the draft: its text went out as a message.
func (d *draftSync) sent() {
	d.mu.Lock()
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.pending = ""
	changed := d.synced != ""
	d.synced = ""
	d.mu.Unlock()
	if changed {
		d.send("")
	}
}

// follow takes the chat's draft as another client left it: it reports
// whether the line being typed should show it, which it should when
// nothing was typed here since the last sync (a send elsewhere clears the
// line; an edit elsewhere shows).
func (d *draftSync) follow(remote, typed string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if remote == d.synced || d.timer != nil || typed != d.synced {
		return false
	}
	d.synced, d.pending = remote, remote
	return true
}

// stop ends syncing; an edit not synced yet is dropped.
func (d *draftSync) stop() {
	d.mu.Lock()
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.mu.Unlock()
}

// lineEditor turns the bytes typed on a terminal in non-canonical mode
// into lines, echoing the line being edited, so that what is typed is known
// before Enter (for the draft).
type lineEditor struct {
	mu   sync.Mutex // feed runs on the reading goroutine; the rest on chat's
	buf  []rune
	echo func(line string) // redraws the line being edited
	edit func(line string) // called after each change
	// complete, when set, is what Tab does: it returns the line
	// completed, and whether it changed.
	complete func(line string) (string, bool)
	part     []byte // an incomplete UTF-8 sequence
}

// feed takes typed bytes and returns the lines completed, and whether
// input ended (Ctrl-D on an empty line).
func (e *lineEditor) feed(p []byte) (lines []string, eof bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, b := range p {
		before := len(e.buf)
		changed := true
		switch b {
		case '\r', '\n':
			lines = append(lines, string(e.buf))
			e.buf = e.buf[:0]
		case 0x04: // Ctrl-D
			if len(e.buf) == 0 {
				return lines, true
			}
			changed = false
		case 0x7f, 0x08: // backspace
			if len(e.buf) > 0 {
				e.buf = e.buf[:len(e.buf)-1]
			}
		case '\t':
			if e.complete == nil {
				e.buf = append(e.buf, '\t')
				break
			}
			// Echoed even when unchanged: the candidates listed moved
			// the line down.
			if line, ok := e.complete(string(e.buf)); ok {
				e.buf = []rune(line)
			}
		case 0x15: // Ctrl-U
			e.buf = e.buf[:0]
		case 0x17: // Ctrl-W: the word before the cursor
			i := len(e.buf)
			for i > 0 && e.buf[i-1] == ' ' {
				i--
			}
			for i > 0 && e.buf[i-1] != ' ' {
				i--
			}
			e.buf = e.buf[:i]
		default:
			if b < 0x20 && b != '\t' {
				changed = false
				break
			}
			e.part = append(e.part, b)
			if !utf8.FullRune(e.part) {
				changed = false
				break
			}
			r, _ := utf8.DecodeRune(e.part)
			e.part = e.part[:0]
			if r != utf8.RuneError {
				e.buf = append(e.buf, r)
			}
		}
		if b == '\r' || b == '\n' {
			if e.echo != nil {
				e.echo("\n")
			}
			continue
		}
		if changed && (len(e.buf) != before || b >= 0x20 || b == 0x15 || b == 0x17 || b == '\t') {
			if e.echo != nil {
				e.echo(string(e.buf))
			}
			if e.edit != nil {
				e.edit(string(e.buf))
			}
		}
	}
	return lines, false
}

// seed starts the line being edited with text (the chat's draft).
func (e *lineEditor) seed(text string) { e.swap(text) }

// swap replaces the line being edited with text, shows it, and returns
// what it held.
func (e *lineEditor) swap(text string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := string(e.buf)
	e.buf = []rune(text)
	if e.echo != nil {
		e.echo(text)
	}
	return old
}

// text returns the line being edited.
func (e *lineEditor) text() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return string(e.buf)
}
