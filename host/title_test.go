package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// TestTitleFromFirstPrompt: a session nobody has named is named after the
// first line of its first prompt; later prompts and a title set by a client
// are left alone.
func TestTitleFromFirstPrompt(t *testing.T) {
	th := startHost(t, nil)
	c := th.dial(t, "a")
	c.initialize()
	title := func(sess string) string {
		return c.Subscribe(sess).State.(*protocol.SessionState).Title
	}
	run := func(chat, id, text string) {
		c.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: id, StartedAt: protocol.FormatTime(time.Now()), Message: userMessage(text)})
		c.WaitFor("turn "+id, func(envs []protocol.ActionEnvelope) bool {
			for _, e := range envs {
				if x, ok := e.Action.(*protocol.ChatTurnCompleteAction); ok && x.TurnID == id {
					return true
				}
			}
			return false
		})
	}

	s1, chat1 := c.newSession("s1")
	c.Subscribe(chat1)
	run(chat1, "t1", "\n  Fix   the tunnel forwarder\nand its test")
	if got := title(s1); got != "Fix the tunnel forwarder" {
		t.Errorf("title %q", got)
	}
	run(chat1, "t2", "something else")
	if got := title(s1); got != "Fix the tunnel forwarder" {
		t.Errorf("a later prompt renamed the session: %q", got)
	}

	s2, chat2 := c.newSession("s2")
	c.Subscribe(chat2)
	c.Dispatch(s2, &protocol.SessionTitleChangedAction{Title: "Mine"})
	run(chat2, "t3", "hello")
	if got := title(s2); got != "Mine" {
		t.Errorf("a client's title was replaced: %q", got)
	}

	s3, chat3 := c.newSession("s3")
	c.Subscribe(chat3)
	long := strings.Repeat("word ", 40)
	run(chat3, "t4", long)
	got := title(s3)
	if !strings.HasSuffix(got, "…") || len([]rune(got)) > 80 || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("long prompt titled %q", got)
	}
}
