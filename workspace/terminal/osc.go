package terminal

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Event is something shell integration or the output stream reported.
type Event struct {
	Kind EventKind
	// Data is output for Output events.
	Data string
	// Text is the title (Title), the directory path (Cwd) or the command
	// line (CommandStarted).
	Text string
	// ExitCode is set on CommandFinished when the shell reported one.
	ExitCode *int64
}

// EventKind says what an Event is.
type EventKind int

// Event kinds.
const (
	Output EventKind = iota
	Title
	Cwd
	// PromptStarted: shell integration is active (a prompt was drawn).
	PromptStarted
	// CommandStarted: a command line was submitted and runs now.
	CommandStarted
	// CommandFinished: the running command ended.
	CommandFinished
)

// maxPending bounds the bytes held back while an escape sequence or a
// UTF-8 character is incomplete; past it they are passed on as output.
const maxPending = 8 << 10

// scanner splits a terminal's output into output text and events. It
// strips shell-integration sequences (OSC 633 and OSC 133), which clients
// must not see, reports title (OSC 0 and 2) and working directory (OSC 7)
// changes while leaving those sequences in the output for terminal
// emulators, and never splits a UTF-8 character between two outputs.
type scanner struct {
	pending     []byte
	commandLine string // from OSC 633;E, for the next C
}

// feed scans the next bytes and calls emit for each output run and event,
// in stream order.
func (s *scanner) feed(b []byte, emit func(Event)) {
	if len(s.pending) == 0 && !bytes.Contains(b, []byte("\x1b]")) {
		// Plain output, the usual case: one copy, into the event.
		n := incompleteTail(b)
		if n > 0 {
			s.pending = append([]byte(nil), b[len(b)-n:]...)
		}
		if len(b) > n {
			emit(Event{Kind: Output, Data: outputText(b[:len(b)-n])})
		}
		return
	}
	buf := b
	if len(s.pending) > 0 {
		buf = append(s.pending, b...)
		s.pending = nil
	}
	var out []byte
	flush := func() {
		if len(out) > 0 {
			emit(Event{Kind: Output, Data: outputText(out)})
			out = out[:0]
		}
	}
	for len(buf) > 0 {
		i := bytes.Index(buf, []byte("\x1b]"))
		if i < 0 {
			out = append(out, buf...)
			buf = nil
			break
		}
		out = append(out, buf[:i]...)
		rest := buf[i+2:]
		end, termLen := oscEnd(rest)
		if end < 0 {
			if len(buf)-i > maxPending {
				out = append(out, buf[i:]...)
				buf = nil
				break
			}
			s.pending = append([]byte(nil), buf[i:]...)
			buf = nil
			break
		}
		body := strings.ToValidUTF8(string(rest[:end]), "\uFFFD")
		seq := buf[i : i+2+end+termLen]
		buf = rest[end+termLen:]
		num, arg, _ := strings.Cut(body, ";")
		switch num {
		case "633", "133":
			flush()
			s.integration(num, arg, emit)
		case "0", "2":
			out = append(out, seq...)
			flush()
			emit(Event{Kind: Title, Text: arg})
		case "7":
			out = append(out, seq...)
			flush()
			if p, ok := cwdOf(arg); ok {
				emit(Event{Kind: Cwd, Text: p})
			}
		default:
			out = append(out, seq...)
		}
	}
	// Hold back a trailing incomplete UTF-8 character.
	if n := incompleteTail(out); n > 0 {
		s.pending = append(append([]byte(nil), out[len(out)-n:]...), s.pending...)
		out = out[:len(out)-n]
	}
	flush()
}

// outputText is output as text: bytes that are not UTF-8 (a binary file
// printed, a program writing Latin-1) become U+FFFD, as a terminal shows
// them, so that the output can go in a JSON string.
func outputText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

// oscEnd finds the end of an OSC body: the index of its terminator (BEL or
// ESC \) and the terminator's length, or -1.
func oscEnd(b []byte) (int, int) {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case 0x07:
			return i, 1
		case 0x1b:
			if i+1 < len(b) {
				if b[i+1] == '\\' {
					return i, 2
				}
				continue
			}
			return -1, 0
		}
	}
	return -1, 0
}

// integration handles one shell-integration sequence: VS Code's OSC 633
// (A prompt start, B prompt end, E command line, C executing, D;code
// finished, P;Cwd=path) or FinalTerm's OSC 133 (A, B, C, D;code).
func (s *scanner) integration(num, arg string, emit func(Event)) {
	code, param, _ := strings.Cut(arg, ";")
	switch code {
	case "A":
		emit(Event{Kind: PromptStarted})
	case "E":
		if num == "633" {
			s.commandLine = unescape633(param)
		}
	case "C":
		emit(Event{Kind: CommandStarted, Text: s.commandLine})
		s.commandLine = ""
	case "D":
		ev := Event{Kind: CommandFinished}
		if n, err := strconv.ParseInt(strings.TrimSpace(param), 10, 64); err == nil {
			ev.ExitCode = &n
		}
		emit(ev)
	case "P":
		if p, ok := strings.CutPrefix(param, "Cwd="); ok && num == "633" {
			emit(Event{Kind: Cwd, Text: unescape633(p)})
		}
	}
}

// unescape633 undoes OSC 633's escaping: \\ and \xNN.
func unescape633(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] == '\\' {
				b.WriteByte('\\')
				i++
				continue
			}
			if s[i+1] == 'x' && i+3 < len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 3
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cwdOf reads OSC 7's file://host/path.
func cwdOf(arg string) (string, bool) {
	rest, ok := strings.CutPrefix(arg, "file://")
	if !ok {
		return "", false
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:], true
	}
	return "", false
}

// incompleteTail returns how many bytes at the end of b start a UTF-8
// character that is not complete yet.
func incompleteTail(b []byte) int {
	for n := 1; n <= 3 && n <= len(b); n++ {
		c := b[len(b)-n]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a leading byte
			need := 2
			switch {
			case c >= 0xf0:
				need = 4
			case c >= 0xe0:
				need = 3
			}
			if need > n {
				return n
			}
			return 0
		}
	}
	return 0
}
