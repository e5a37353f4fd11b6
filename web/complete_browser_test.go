package web_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
)

// TestBrowserCompletions: typing "@" and part of a path in the composer
// opens the host's completions; the arrow keys move in the list, Enter
// inserts the item, and the message carries the file's attachment with
// its range; Escape closes the list leaving the text alone. Keys go as
// typeKeys sends them: a browser sends no separate char event for a key
// the page handled on keydown.
func TestBrowserCompletions(t *testing.T) {
	_, url := testHost(t)
	dir := t.TempDir()
	for _, f := range []string{"main.go", "docs/guide.md", "docs/gadgets.md"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, 1000, 800)
	b.sessionIn(url, dir, "a folder with files")
	b.wait("the chat", `!!window.ahpApp.chatURI && !!window.ahpApp.client.state(window.ahpApp.chatURI)`)
	o := newOther(t, url)
	o.follow(eval[string](b, `window.ahpApp.chatURI`))

	b.run("typing an @ word", chromedp.SendKeys(chromedp.ID("#prompt"), "read 😀 @gd"))
	b.wait("the completion list", `!document.querySelector('#completions').hidden && document.querySelectorAll('#completions li').length === 2`)
	b.shot("completions")
	first := eval[string](b, `document.querySelector('#completions li[aria-selected=true]').textContent`)
	b.run("moving down, up and down again", typeKeys("#prompt", kb.ArrowDown+kb.ArrowUp+kb.ArrowDown))
	second := eval[string](b, `document.querySelector('#completions li[aria-selected=true]').textContent`)
	if first == second || (second != "@docs/guide.md" && second != "@docs/gadgets.md") {
		t.Fatalf("selected %q then %q", first, second)
	}
	b.run("accepting", typeKeys("#prompt", kb.Enter))
	b.wait("the list closed", `document.querySelector('#completions').hidden`)
	if got, want := eval[string](b, `document.querySelector('#prompt').value`), "read 😀 "+second+" "; got != want {
		t.Fatalf("the composer holds %q, want %q", got, want)
	}
	b.run("sending", chromedp.Click(chromedp.ID("#send")))
	st := o.state("the message with its attachment", func(st *protocol.ChatState) bool {
		return len(st.Turns) > 0 && len(st.Turns[len(st.Turns)-1].Message.Attachments) == 1
	})
	att, ok := st.Turns[len(st.Turns)-1].Message.Attachments[0].(*protocol.MessageResourceAttachment)
	if !ok {
		t.Fatalf("attachment %T", st.Turns[len(st.Turns)-1].Message.Attachments[0])
	}
	if want := files.URIOf(filepath.Join(dir, filepath.FromSlash(second[1:]))); att.URI != want {
		t.Errorf("attachment URI %s, want %s", att.URI, want)
	}
	// "read 😀 " is 8 UTF-16 units: the emoji counts two.
	if r := att.Range; r == nil || r.Start.Character != 8 || r.End.Character != int64(8+len(second)) {
		t.Errorf("attachment range %+v, want characters 8 to %d", r, 8+len(second))
	}

	b.run("typing another", chromedp.SendKeys(chromedp.ID("#prompt"), "@mai"))
	b.wait("the list again", `document.querySelector('#completions li')?.textContent === '@main.go'`)
	b.run("closing it", typeKeys("#prompt", kb.Escape))
	b.wait("the list closed", `document.querySelector('#completions').hidden`)
	if got := eval[string](b, `document.querySelector('#prompt').value`); got != "@mai" {
		t.Errorf("after Escape the composer holds %q", got)
	}
}
