package host_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
)

// TestCompletions: "@" words complete to the files and folders of the
// session's working directories, with offsets in UTF-16 code units, a
// resource attachment each, nothing git ignores, and at most 50 items.
//
// It runs in a synctest bubble: the search's deadline is on the bubble's
// clock, which stands still while git lists the files, so a slow machine
// cannot cut the search short.
func TestCompletions(t *testing.T) {
	synctest.Test(t, testCompletions)
}

func testCompletions(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"main.go", "docs/日本語.md", "build/out.bin", "cmd/tool/main.go"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 80 {
		p := filepath.Join(root, "many", "f"+string(rune('a'+i/26))+string(rune('a'+i%26))+".txt")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	th := startPipeHost(t, nil)
	c := th.dial(t, "composer")
	res := c.initializeAt("1.1.0")
	if !slices.Equal(res.CompletionTriggerCharacters, []string{"@", "/"}) {
		t.Errorf("completionTriggerCharacters %v", res.CompletionTriggerCharacters)
	}
	uri := protocol.SessionURI("completions")
	c.Must("createSession", &protocol.CreateSessionParams{Channel: uri, WorkingDirectories: []string{files.URIOf(root)}}, nil)
	var sub protocol.SubscribeResult
	c.Must("subscribe", &protocol.SubscribeParams{Channel: uri}, &sub)
	chat := *sub.Snapshot.State.(*protocol.SessionState).DefaultChat

	complete := func(text string, offset int64) []protocol.CompletionItem {
		t.Helper()
		var res protocol.CompletionsResult
		c.Must("completions", &protocol.CompletionsParams{Channel: chat, Kind: protocol.CompletionItemKindUserMessage, Text: text, Offset: offset}, &res)
		return res.Items
	}
	tests := []struct {
		name       string
		text       string
		offset     int64
		first      string // insertText of the first item
		start, end int64  // its range, UTF-16 units
		attStart   int64  // the attachment's range start in the final text
		attEnd     int64
	}{
		{"ascii", "see @mai", 8, "@main.go", 4, 8, 4, 12},
		{"cursor inside the word", "see @main now", 8, "@main.go", 4, 9, 4, 12},
		{"after an emoji", "😀 @mai", 7, "@main.go", 3, 7, 3, 11},
		{"after CJK", "看看 @日本", 6, "@docs/日本語.md", 3, 6, 3, 15},
		{"emoji before, on a second line", "a😀b\n@tool", 10, "@cmd/tool", 5, 10, 0, 9},
	}
	// No subtests: a bubble's test may not call t.Run.
	for _, tt := range tests {
		items := complete(tt.text, tt.offset)
		if len(items) == 0 {
			t.Errorf("%s: no items", tt.name)
			continue
		}
		it := items[0]
		if it.InsertText != tt.first || *it.RangeStart != tt.start || *it.RangeEnd != tt.end {
			t.Errorf("%s: first item %q [%d,%d), want %q [%d,%d)", tt.name, it.InsertText, *it.RangeStart, *it.RangeEnd, tt.first, tt.start, tt.end)
			continue
		}
		att, ok := it.Attachment.(*protocol.MessageResourceAttachment)
		if !ok {
			t.Errorf("%s: attachment %T", tt.name, it.Attachment)
			continue
		}
		want := files.URIOf(filepath.Join(root, filepath.FromSlash(tt.first[1:])))
		if att.URI != want || att.Range == nil || att.Range.Start.Character != tt.attStart || att.Range.End.Character != tt.attEnd {
			t.Errorf("%s: attachment %s %+v, want %s [%d,%d)", tt.name, att.URI, att.Range, want, tt.attStart, tt.attEnd)
		}
	}
	dir := complete("@cmd", 4)
	if att := dir[0].Attachment.(*protocol.MessageResourceAttachment); dir[0].InsertText != "@cmd" || att.DisplayKind == nil || *att.DisplayKind != "directory" {
		t.Errorf("a folder: %+v", dir[0])
	}
	for _, it := range complete("@", 1) {
		if it.InsertText == "@build" || it.InsertText == "@build/out.bin" {
			t.Errorf("git-ignored %s offered", it.InsertText)
		}
	}
	if n := len(complete("@", 1)); n != 50 {
		t.Errorf("%d items, want the bound of 50", n)
	}
	for _, text := range []string{"plain words", "an email@", "/cmd"} {
		if items := complete(text, int64(len(text))); len(items) != 0 {
			t.Errorf("%q: %d items", text, len(items))
		}
	}
	bad := []struct {
		name string
		p    *protocol.CompletionsParams
		code protocol.ErrorCode
	}{
		{"offset past the end", &protocol.CompletionsParams{Channel: chat, Kind: protocol.CompletionItemKindUserMessage, Text: "@a", Offset: 3}, protocol.CodeInvalidParams},
		{"offset inside a surrogate pair", &protocol.CompletionsParams{Channel: chat, Kind: protocol.CompletionItemKindUserMessage, Text: "😀", Offset: 1}, protocol.CodeInvalidParams},
		{"negative offset", &protocol.CompletionsParams{Channel: chat, Kind: protocol.CompletionItemKindUserMessage, Text: "@a", Offset: -1}, protocol.CodeInvalidParams},
		{"unknown chat", &protocol.CompletionsParams{Channel: uri + "/nochat", Kind: protocol.CompletionItemKindUserMessage, Text: "@a", Offset: 2}, protocol.CodeNotFound},
		{"unknown kind", &protocol.CompletionsParams{Channel: chat, Kind: "other", Text: "@a", Offset: 2}, protocol.CodeInvalidParams},
	}
	for _, tt := range bad {
		if err := c.Call("completions", tt.p, nil); rpcCode(err) != tt.code {
			t.Errorf("%s: %v, want code %d", tt.name, err, tt.code)
		}
	}
}
