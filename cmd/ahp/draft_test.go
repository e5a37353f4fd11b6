package main

import (
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
)

// TestDraftSyncDebounced: edits are sent once typing pauses, not per key;
// an unchanged draft is not sent again; sending the message clears it.
func TestDraftSyncDebounced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var sent []string
		got := func() []string {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(sent)
		}
		d := newDraftSync("", 500*time.Millisecond, func(s string) {
			mu.Lock()
			sent = append(sent, s)
			mu.Unlock()
		})
		for _, s := range []string{"h", "he", "hel"} {
			d.typed(s)
			time.Sleep(300 * time.Millisecond)
		}
		if s := got(); len(s) != 0 {
			t.Fatalf("sent while typing: %q", s)
		}
		time.Sleep(300 * time.Millisecond)
		if s := got(); !slices.Equal(s, []string{"hel"}) {
			t.Fatalf("after the pause: %q", s)
		}
		d.typed("help")
		d.typed("hel") // back to what the chat has
		time.Sleep(time.Second)
		if s := got(); !slices.Equal(s, []string{"hel"}) {
			t.Fatalf("an unchanged draft was sent again: %q", s)
		}
		d.typed("hello")
		d.sent() // before the pause: the edit is dropped, the draft cleared
		time.Sleep(time.Second)
		if s := got(); !slices.Equal(s, []string{"hel", ""}) {
			t.Fatalf("after sending: %q", s)
		}
		d.sent() // nothing to clear
		if s := got(); len(s) != 2 {
			t.Fatalf("cleared twice: %q", s)
		}

		seeded := newDraftSync("from before", time.Second, func(s string) {
			mu.Lock()
			sent = append(sent, "seeded:"+s)
			mu.Unlock()
		})
		seeded.sent()
		if s := got(); s[len(s)-1] != "seeded:" {
			t.Fatalf("a seeded draft was not cleared: %q", s)
		}
	})
}

func TestLineEditor(t *testing.T) {
	var echoed, edits []string
	e := &lineEditor{echo: func(s string) { echoed = append(echoed, s) }, edit: func(s string) { edits = append(edits, s) }}
	e.seed("draft")
	lines, eof := e.feed([]byte(" x\x7f\x7fy\x17z\rone two\x17three\x15new\n\xc3"))
	if eof || !slices.Equal(lines, []string{"z", "new"}) {
		t.Fatalf("lines %q, eof %v", lines, eof)
	}
	lines, eof = e.feed([]byte("\xa9\r\x04"))
	if !eof || !slices.Equal(lines, []string{"é"}) {
		t.Fatalf("lines %q, eof %v", lines, eof)
	}
	if edits[0] != "draft " || edits[len(edits)-1] != "é" || echoed[0] != "draft" {
		t.Errorf("edits %q, echoed %q", edits, echoed)
	}
}

// TestChatDraft: on a terminal, chat starts its input from the chat's
// draft, syncs what is typed to the draft, and clears it on send.
func TestChatDraft(t *testing.T) {
	h := newHarness(t, nil)
	id := strings.TrimSpace(h.cmd("", "new").run(t).stdout)
	other := hosttest.Dial(t, h.url, "other")
	other.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{"0.8.0"}, ClientID: "other"}, nil)
	sess := other.Subscribe("echo:/" + id).State.(*protocol.SessionState)
	chat := *sess.DefaultChat
	other.Subscribe(chat)
	other.Dispatch(chat, &protocol.ChatDraftChangedAction{Draft: &protocol.Message{Text: "started elsewhere", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}})
	// A dispatch is not answered: its echo says the host applied it, so
	// the chat below starts from a snapshot with the draft.
	other.WaitFor("the draft applied", hosttest.HasType("chat/draftChanged"))

	pr, pw := io.Pipe()
	inv := h.cmd("", "chat", id)
	inv.env.stdin = pr
	inv.env.stdinTTY = true
	inv.env.cbreak = func() (func(), error) { return func() {}, nil }
	inv.env.draftDelay = 10 * time.Millisecond
	done := make(chan result, 1)
	go func() { done <- inv.run(t) }()
	waitFor(t, inv.err, "> started elsewhere")

	draftIs := func(want string) func([]protocol.ActionEnvelope) bool {
		return func(envs []protocol.ActionEnvelope) bool {
			for i := len(envs) - 1; i >= 0; i-- {
				if d, ok := envs[i].Action.(*protocol.ChatDraftChangedAction); ok && envs[i].Origin != nil && envs[i].Origin.ClientID != "other" {
					return d.Draft == nil && want == "" || d.Draft != nil && d.Draft.Text == want
				}
			}
			return false
		}
	}
	io.WriteString(pw, ", and typed here") // one read: one pause
	other.WaitFor("the draft synced", draftIs("started elsewhere, and typed here"))
	io.WriteString(pw, "\r")
	other.WaitFor("the draft cleared", draftIs(""))
	waitFor(t, inv.out, "You said: started elsewhere, and typed here\n")
	pw.Close()
	if r := <-done; r.code != 0 {
		t.Fatalf("chat: %d %s", r.code, r.stderr)
	}
	n := 0
	for _, e := range other.Envelopes() {
		if _, ok := e.Action.(*protocol.ChatDraftChangedAction); ok && e.Origin != nil && e.Origin.ClientID != "other" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d draft changes sent, want 2 (one per pause, one to clear)", n)
	}
	st := other.Subscribe(chat).State.(*protocol.ChatState)
	if st.Draft != nil {
		t.Errorf("draft left: %+v", st.Draft)
	}
}
