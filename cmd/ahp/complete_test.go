package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

func item(insert string, start, end int64, uri string) protocol.CompletionItem {
	return protocol.CompletionItem{InsertText: insert, RangeStart: &start, RangeEnd: &end,
		Attachment: &protocol.MessageResourceAttachment{Label: insert[1:], URI: uri}}
}

// TestTabCompleter: Tab replaces the word with the one item found (the
// range in UTF-16 units, emoji before it), extends it to what several
// items share and lists them, and leaves the line alone when there are
// none; the message carries the taken items' attachments, with their
// range in its text.
func TestTabCompleter(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		offset  int64
		items   []protocol.CompletionItem
		err     error
		want    string
		changed bool
		noted   string
	}{
		{"one item", "see @ma", 7, []protocol.CompletionItem{item("@main.go", 4, 7, "file:///w/main.go")}, nil, "see @main.go ", true, ""},
		{"after an emoji", "😀 @ma", 6, []protocol.CompletionItem{item("@main.go", 3, 6, "file:///w/main.go")}, nil, "😀 @main.go ", true, ""},
		{"after CJK", "看 @日", 4, []protocol.CompletionItem{item("@日本.md", 2, 4, "file:///w/日本.md")}, nil, "看 @日本.md ", true, ""},
		{"several share a prefix", "@do", 3, []protocol.CompletionItem{item("@docs/a.md", 0, 3, "file:///w/docs/a.md"), item("@docs/b.md", 0, 3, "file:///w/docs/b.md")}, nil, "@docs/", true, "@docs/a.md  @docs/b.md"},
		{"several share nothing more", "@d", 2, []protocol.CompletionItem{item("@docs", 0, 2, "file:///w/docs"), item("@dist", 0, 2, "file:///w/dist")}, nil, "@d", false, "@docs  @dist"},
		{"a shared prefix ends inside a rune", "@日", 2, []protocol.CompletionItem{item("@日本", 0, 2, "file:///w/日本"), item("@日曜", 0, 2, "file:///w/日曜")}, nil, "@日", false, "@日本  @日曜"},
		{"none", "@zz", 3, nil, nil, "@zz", false, ""},
		{"an error", "@zz", 3, nil, errors.New("gone"), "@zz", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var noted string
			tc := &tabCompleter{
				ask: func(text string, offset int64) ([]protocol.CompletionItem, error) {
					if text != tt.line || offset != tt.offset {
						t.Errorf("asked %q at %d, want %q at %d", text, offset, tt.line, tt.offset)
					}
					return tt.items, tt.err
				},
				note: func(s string) { noted = s },
			}
			got, changed := tc.complete(tt.line)
			if got != tt.want || changed != tt.changed || noted != tt.noted {
				t.Errorf("complete(%q) = %q, %v, noted %q; want %q, %v, %q", tt.line, got, changed, noted, tt.want, tt.changed, tt.noted)
			}
		})
	}

	tc := &tabCompleter{ask: func(string, int64) ([]protocol.CompletionItem, error) {
		return []protocol.CompletionItem{item("@main.go", 3, 6, "file:///w/main.go")}, nil
	}, note: func(string) {}}
	line, _ := tc.complete("😀 @ma")
	text := "fix " + strings.TrimSpace(line) + " please"
	atts := tc.attachments(text)
	if len(atts) != 1 {
		t.Fatalf("attachments %v", atts)
	}
	a := atts[0].(*protocol.MessageResourceAttachment)
	// "fix 😀 " is 7 UTF-16 units.
	if a.URI != "file:///w/main.go" || a.Range == nil || a.Range.Start.Character != 7 || a.Range.End.Character != 15 {
		t.Errorf("attachment %+v range %+v", a, a.Range)
	}
	if len(tc.attachments(text)) != 0 {
		t.Error("attachments were not forgotten once sent")
	}
	tc.complete("@ma")
	if atts := tc.attachments("edited away"); len(atts) != 0 {
		t.Errorf("an item no longer in the text was attached: %v", atts)
	}
}

// TestLineEditorTab: Tab runs the completer and the line shows its result;
// without a completer Tab is typed.
func TestLineEditorTab(t *testing.T) {
	var echoed []string
	e := &lineEditor{echo: func(s string) { echoed = append(echoed, s) }, complete: func(line string) (string, bool) {
		if line == "see @ma" {
			return "see @main.go ", true
		}
		return line, false
	}}
	lines, _ := e.feed([]byte("see @ma\tnow\r"))
	if !slices.Equal(lines, []string{"see @main.go now"}) {
		t.Errorf("lines %q", lines)
	}
	if !slices.Contains(echoed, "see @main.go ") {
		t.Errorf("echoed %q", echoed)
	}
	plain := &lineEditor{}
	if lines, _ := plain.feed([]byte("a\tb\r")); !slices.Equal(lines, []string{"a\tb"}) {
		t.Errorf("without a completer: %q", lines)
	}
}
