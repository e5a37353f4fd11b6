package main

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ahp-go/ahp/internal/completion"
	"github.com/ahp-go/ahp/protocol"
)

// maxShownCompletions bounds the candidates listed when Tab finds several.
const maxShownCompletions = 10

// tabCompleter completes the word before the cursor (the end of the line
// being typed) when Tab is pressed in ahp chat: an "@" word to a file or
// folder of the session, a "/" word starting the line to one of the
// agent's commands, as the host's completions command answers. One item
// replaces the word; several extend it to what they share and are listed.
// The attachments of the items taken travel with the message.
type tabCompleter struct {
	ask  func(text string, offset int64) ([]protocol.CompletionItem, error)
	note func(string) // shows the candidates

	mu       sync.Mutex
	accepted []protocol.CompletionItem
}

// complete returns the line after Tab, and whether it changed.
func (t *tabCompleter) complete(line string) (string, bool) {
	units := utf16.Encode([]rune(line))
	items, err := t.ask(line, int64(len(units)))
	if err != nil || len(items) == 0 {
		return line, false
	}
	replace := func(it protocol.CompletionItem, insert string) string {
		start, end := int64(len(units)), int64(len(units))
		if it.RangeStart != nil && it.RangeEnd != nil && 0 <= *it.RangeStart && *it.RangeStart <= *it.RangeEnd && *it.RangeEnd <= int64(len(units)) {
			start, end = *it.RangeStart, *it.RangeEnd
		}
		return string(utf16.Decode(units[:start])) + insert + string(utf16.Decode(units[end:]))
	}
	if len(items) == 1 {
		t.mu.Lock()
		t.accepted = append(t.accepted, items[0])
		t.mu.Unlock()
		return replace(items[0], items[0].InsertText+" "), true
	}
	prefix := items[0].InsertText
	names := make([]string, 0, min(len(items), maxShownCompletions))
	for i, it := range items {
		for !strings.HasPrefix(it.InsertText, prefix) {
			_, size := utf8.DecodeLastRuneInString(prefix)
			prefix = prefix[:len(prefix)-size]
		}
		if i < maxShownCompletions {
			names = append(names, it.InsertText)
		}
	}
	more := ""
	if len(items) > maxShownCompletions {
		more = fmt.Sprintf("  (and %d more)", len(items)-maxShownCompletions)
	}
	t.note(strings.Join(names, "  ") + more)
	out := replace(items[0], prefix)
	return out, out != line && len(out) > len(line)
}

// attachments returns the attachments of the items taken whose text is
// still in the message, with their range in it, and forgets them all.
func (t *tabCompleter) attachments(text string) []protocol.MessageAttachment {
	t.mu.Lock()
	taken := t.accepted
	t.accepted = nil
	t.mu.Unlock()
	var out []protocol.MessageAttachment
	for _, it := range taken {
		at := strings.Index(text, it.InsertText)
		if at < 0 || it.Attachment == nil {
			continue
		}
		sl, sc := completion.Position(text, at)
		el, ec := completion.Position(text, at+len(it.InsertText))
		r := &protocol.TextRange{Start: protocol.TextPosition{Line: int64(sl), Character: int64(sc)}, End: protocol.TextPosition{Line: int64(el), Character: int64(ec)}}
		if a := withRange(it.Attachment, r); a != nil {
			out = append(out, a)
		}
	}
	return out
}

// withRange returns a copy of the attachment with its range set.
func withRange(a protocol.MessageAttachment, r *protocol.TextRange) protocol.MessageAttachment {
	switch a := a.(type) {
	case *protocol.MessageResourceAttachment:
		c := *a
		c.Range = r
		return &c
	case *protocol.SimpleMessageAttachment:
		c := *a
		c.Range = r
		return &c
	case *protocol.MessageEmbeddedResourceAttachment:
		c := *a
		c.Range = r
		return &c
	case *protocol.MessageAnnotationsAttachment:
		c := *a
		c.Range = r
		return &c
	case *protocol.MessageChatAttachment:
		c := *a
		c.Range = r
		return &c
	}
	return a
}
