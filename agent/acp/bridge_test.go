package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// TestProbeAndInfo checks that the root state lists what the agent
// reported: its title, name and version, its models and its modes.
func TestProbeAndInfo(t *testing.T) {
	b := newBackend(t, nil)
	if err := b.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	th := startHost(t, b)
	c := th.dial(t, "a")
	root := c.Subscribe(protocol.RootURI).State.(*protocol.RootState)
	if len(root.Agents) != 1 {
		t.Fatalf("agents: %+v", root.Agents)
	}
	info := root.Agents[0]
	if info.Provider != "test" || info.DisplayName != "ACP test agent" || !strings.Contains(info.Description, "acptest 1.0.0") {
		t.Errorf("info %+v", info)
	}
	var models []string
	for _, m := range info.Models {
		models = append(models, m.ID+"/"+m.Name)
	}
	if diff := cmp.Diff([]string{"small/Small", "large/Large"}, models); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	if len(info.Customizations) != 1 {
		t.Fatalf("customizations: %+v", info.Customizations)
	}
	modes := info.Customizations[0].(*protocol.PluginCustomization)
	var names []string
	for _, ch := range modes.Children {
		a := ch.(*protocol.AgentCustomization)
		names = append(names, a.URI+"="+a.Name)
	}
	if diff := cmp.Diff([]string{"acp:mode/ask=Ask", "acp:mode/code=Code"}, names); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
}

// TestStreamingSeenByTwoClients runs a turn with text and thoughts and
// checks that two clients receive the same envelopes and reduce them to
// the host's state.
func TestStreamingSeenByTwoClients(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	b := th.dial(t, "b")
	sess, chat := a.newSession("s1", "test", t.TempDir())
	if got := b.join(sess); got != chat {
		t.Fatalf("default chat %s, want %s", got, chat)
	}
	chatSnap := b.Subscribe(chat)
	turn := a.startTurn(chat, "t1", "words Hello shared world\nthink Let me see\nsay Done.\nusage")
	a.waitTurnEnd(turn)
	b.waitTurnEnd(turn)

	onlyChat := func(envs []protocol.ActionEnvelope) []protocol.ActionEnvelope {
		var out []protocol.ActionEnvelope
		for _, e := range envs {
			if e.Channel == chat {
				out = append(out, e)
			}
		}
		return out
	}
	ea, eb := onlyChat(a.Envelopes()), onlyChat(b.Envelopes())
	if diff := cmp.Diff(envTypes(ea), envTypes(eb)); diff != "" {
		t.Fatalf("clients saw different actions (-a +b):\n%s", diff)
	}
	if _, ok := turnEnd(ea, turn).Action.(*protocol.ChatTurnCompleteAction); !ok {
		t.Fatalf("turn ended with %s", turnEnd(ea, turn).Action.Type())
	}

	st := th.chatState(t, chat)
	tr := finishedTurn(t, st, turn)
	if got, want := markdown(tr.ResponseParts), "Hello shared worldDone."; got != want {
		t.Errorf("markdown %q, want %q", got, want)
	}
	// Parts in stream order: text, reasoning, text.
	var kinds []string
	for _, p := range tr.ResponseParts {
		kinds = append(kinds, p.Kind())
	}
	if diff := cmp.Diff([]string{"markdown", "reasoning", "markdown"}, kinds); diff != "" {
		t.Errorf("part kinds (-want +got):\n%s", diff)
	}
	if r := tr.ResponseParts[1].(*protocol.ReasoningResponsePart); r.Content.String() != "Let me see" {
		t.Errorf("reasoning %q", r.Content.String())
	}
	if tr.Usage == nil || tr.Usage.InputTokens == nil || *tr.Usage.InputTokens != 12 || *tr.Usage.OutputTokens != 34 ||
		*tr.Usage.CacheReadTokens != 5 || string(tr.Usage.Meta["contextSize"]) != "200000" {
		t.Errorf("usage %+v", tr.Usage)
	}

	// What client b mirrored from its snapshot equals the host's state.
	r := reducer.Reducer{}
	var mirrored protocol.SnapshotState = chatSnap.State
	for _, e := range eb {
		if e.ServerSeq > chatSnap.FromSeq && e.RejectionReason == nil {
			mirrored = r.Apply(mirrored, e.Action)
		}
	}
	mt := finishedTurn(t, mirrored.(*protocol.ChatState), turn)
	if markdown(mt.ResponseParts) != markdown(tr.ResponseParts) || len(mt.ResponseParts) != len(tr.ResponseParts) {
		t.Errorf("mirrored turn differs from the host's")
	}
}

func envTypes(envs []protocol.ActionEnvelope) []string {
	out := make([]string, len(envs))
	for i, e := range envs {
		out[i] = e.Action.Type() + "@" + strconv.FormatInt(e.ServerSeq, 10)
	}
	return out
}

// pendingTool waits for a tool call waiting for confirmation and returns
// its id.
func pendingTool(c *client, turn string) *protocol.ChatToolCallReadyAction {
	c.T.Helper()
	var ready *protocol.ChatToolCallReadyAction
	c.WaitFor("a tool call waiting for confirmation", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if r, ok := e.Action.(*protocol.ChatToolCallReadyAction); ok && r.TurnID == turn && r.Confirmed == nil {
				ready = r
				return true
			}
		}
		return false
	})
	return ready
}

// TestToolPermission runs a tool call that needs permission: any client
// may answer, the first answer wins, and the option chosen reaches the
// agent.
func TestToolPermission(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	b := th.dial(t, "b")
	sess, chat := a.newSession("s1", "test", t.TempDir())
	b.join(sess)
	turn := a.startTurn(chat, "t1", "tool Edit the file")
	ready := pendingTool(b, turn)
	if ready.ToolCallID != "call-1" || ready.InvocationMessage.Text != "Edit the file" {
		t.Errorf("ready %+v", ready)
	}
	var opts []string
	for _, o := range ready.Options {
		opts = append(opts, o.ID+":"+string(o.Kind))
	}
	if diff := cmp.Diff([]string{"allow:approve", "always:approve", "reject:deny"}, opts); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	// The session shows the block too.
	if st := th.sessionState(t, sess); len(st.InputNeeded) != 1 {
		t.Errorf("inputNeeded %+v", st.InputNeeded)
	}
	b.Dispatch(chat, &protocol.ChatToolCallConfirmedAction{TurnID: turn, ToolCallID: ready.ToolCallID, Approved: true, SelectedOptionID: protocol.Ptr("always")})
	// Client a answers too, after b's answer was accepted: too late.
	a.WaitFor("b's answer", func(envs []protocol.ActionEnvelope) bool {
		return slices.ContainsFunc(envs, func(e protocol.ActionEnvelope) bool {
			return e.Action.Type() == "chat/toolCallConfirmed" && e.Origin != nil && e.Origin.ClientID == "b"
		})
	})
	a.Dispatch(chat, &protocol.ChatToolCallConfirmedAction{TurnID: turn, ToolCallID: ready.ToolCallID, Approved: false})
	// The second answer is rejected.
	a.WaitFor("the second answer rejected", func(envs []protocol.ActionEnvelope) bool {
		return slices.ContainsFunc(envs, func(e protocol.ActionEnvelope) bool {
			return e.Action.Type() == "chat/toolCallConfirmed" && e.RejectionReason != nil
		})
	})
	a.waitTurnEnd(turn)
	tr := finishedTurn(t, th.chatState(t, chat), turn)
	tcs := toolCalls(tr.ResponseParts)
	if len(tcs) != 1 {
		t.Fatalf("tool calls %+v", tcs)
	}
	done, ok := tcs[0].(*protocol.ToolCallCompletedState)
	if !ok {
		t.Fatalf("tool call ended as %s", tcs[0].Status())
	}
	if !done.Success || done.ToolName != "edit" || done.SelectedOption == nil || done.SelectedOption.ID != "always" {
		t.Errorf("tool call %+v", done)
	}
	// The kind names the tool; the title is what it does.
	if done.DisplayName != "Edit" || done.InvocationMessage.Text != "Edit the file" || done.PastTenseMessage.Text != "Edit the file" {
		t.Errorf("display name %q, invocation %q, past tense %q", done.DisplayName, done.InvocationMessage.Text, done.PastTenseMessage.Text)
	}
	if len(done.Content) != 1 || done.Content[0].(*protocol.ToolResultTextContent).Text != "done: Edit the file" {
		t.Errorf("content %+v", done.Content)
	}
	if string(done.StructuredContent["ok"]) != "true" || done.ToolInput == nil || !strings.Contains(*done.ToolInput.Inline, `"title":"Edit the file"`) {
		t.Errorf("structured content %v, input %q", done.StructuredContent, *done.ToolInput.Inline)
	}
	if !strings.Contains(string(done.Meta["locations"]), `"uri":"file:///tmp/x.txt","line":3`) {
		t.Errorf("locations %s", done.Meta["locations"])
	}
	if got := markdown(tr.ResponseParts); got != "tool finished with always" {
		t.Errorf("reply %q", got)
	}
	if st := th.sessionState(t, sess); len(st.InputNeeded) != 0 {
		t.Errorf("inputNeeded left %+v", st.InputNeeded)
	}
}

// TestPermissionBeforeToolCall: the permission request arrives before the
// update that announces the tool call; a denial cancels it.
func TestPermissionBeforeToolCall(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", t.TempDir())
	turn := a.startTurn(chat, "t1", "tool-first Delete things")
	ready := pendingTool(a, turn)
	a.Dispatch(chat, &protocol.ChatToolCallConfirmedAction{TurnID: turn, ToolCallID: ready.ToolCallID, Approved: false})
	a.waitTurnEnd(turn)
	tr := finishedTurn(t, th.chatState(t, chat), turn)
	tcs := toolCalls(tr.ResponseParts)
	if len(tcs) != 1 {
		t.Fatalf("tool calls %+v", tcs)
	}
	if c, ok := tcs[0].(*protocol.ToolCallCancelledState); !ok || c.Reason != protocol.ToolCallCancellationReasonDenied {
		t.Fatalf("tool call %+v", tcs[0])
	}
	if got := markdown(tr.ResponseParts); got != "tool rejected" {
		t.Errorf("reply %q", got)
	}
}

// TestAutoToolCall: a tool call that needs no permission runs and
// completes with its text, its diff and its renamed title.
func TestAutoToolCall(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", t.TempDir())
	turn := a.startTurn(chat, "t1", "autotool Read a")
	a.waitTurnEnd(turn)
	tr := finishedTurn(t, th.chatState(t, chat), turn)
	tcs := toolCalls(tr.ResponseParts)
	if len(tcs) != 1 {
		t.Fatalf("tool calls %+v", tcs)
	}
	done, ok := tcs[0].(*protocol.ToolCallCompletedState)
	if !ok || done.Confirmed != protocol.ToolCallConfirmationReasonNotNeeded || done.PastTenseMessage.Text != "Read a (renamed)" || done.ToolName != "read" {
		t.Fatalf("tool call %+v", tcs[0])
	}
	if len(done.Content) != 2 {
		t.Fatalf("content %+v", done.Content)
	}
	edit := done.Content[1].(*protocol.ToolResultFileEditContent)
	if edit.After.URI != "file:///tmp/a.txt" || *edit.Diff.Added != 2 || *edit.Diff.Removed != 1 || edit.Before == nil ||
		!strings.HasPrefix(edit.After.Content.URI, "data:text/plain") {
		t.Errorf("file edit %+v %+v %+v", edit.After, edit.Diff, edit.Before)
	}
}

// TestFiles serves reads and writes inside the working directory only.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("line1\nline2\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.txt")))
	must(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat("x", 2000)), 0o644))
	th := startHost(t, newBackend(t, &acp.Options{MaxFileBytes: 1000}))
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", dir)
	script := strings.Join([]string{
		"read " + filepath.Join(dir, "a.txt"),
		"read " + filepath.Join(outside, "secret.txt"),
		"read " + filepath.Join(dir, "link.txt"),
		"read " + filepath.Join(dir, "big.txt"),
		"read " + filepath.Join(dir, "..", filepath.Base(outside), "secret.txt"),
		"read " + filepath.Join(dir, "missing.txt"),
		"write " + filepath.Join(dir, "sub", "b.txt") + " hello",
		"write " + filepath.Join(outside, "x.txt") + " nope",
		"write " + filepath.Join(dir, "link.txt") + " nope",
		"write " + filepath.Join(dir, "huge.txt") + " " + strings.Repeat("y", 1500),
	}, "\n")
	turn := a.startTurn(chat, "t1", script)
	a.waitTurnEnd(turn)
	tr := finishedTurn(t, th.chatState(t, chat), turn)
	got := markdown(tr.ResponseParts)
	for _, want := range []string{
		"line1\nline2\n",
		"secret.txt is outside the session's working directory",
		"link.txt leads outside the session's working directory",
		"big.txt is 2000 bytes; files over 1000 bytes are refused",
		"missing.txt does not exist",
		"wrote " + filepath.Join(dir, "sub", "b.txt"),
		"x.txt is outside the session's working directory",
		"the content for " + filepath.Join(dir, "huge.txt") + " is 1500 bytes; files over 1000 bytes are refused",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("reply lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "secret\n") || strings.HasSuffix(got, "secret") {
		t.Errorf("a file outside was read:\n%s", got)
	}
	if strings.Count(got, "write error") != 3 {
		t.Errorf("want 3 refused writes:\n%s", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "sub", "b.txt")); err != nil || string(b) != "hello" {
		t.Errorf("b.txt: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret" {
		t.Errorf("secret.txt changed: %q", b)
	}
	// The write shows as a file edit on the turn.
	var edits []*protocol.ToolResultFileEditContent
	for _, tc := range toolCalls(tr.ResponseParts) {
		if done, ok := tc.(*protocol.ToolCallCompletedState); ok {
			for _, c := range done.Content {
				if e, ok := c.(*protocol.ToolResultFileEditContent); ok {
					edits = append(edits, e)
				}
			}
		}
	}
	if len(edits) != 1 || edits[0].After.URI != "file://"+filepath.Join(dir, "sub", "b.txt") || edits[0].Before != nil || *edits[0].Diff.Added != 1 {
		t.Errorf("file edits %+v", edits)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSlowCancel: the client's cancel ends the AHP turn at once; the chat
// shows the agent stopping until it answers; its late updates are dropped;
// the next turn runs normally.
func TestSlowCancel(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	b := th.dial(t, "b")
	sess, chat := a.newSession("s1", "test", t.TempDir())
	b.join(sess)
	turn := a.startTurn(chat, "t1", "slow 500")
	a.WaitFor("some deltas", func(envs []protocol.ActionEnvelope) bool {
		n := 0
		for _, e := range envs {
			if _, ok := e.Action.(*protocol.ChatDeltaAction); ok {
				n++
			}
		}
		return n >= 3
	})
	a.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: turn})
	end := b.waitTurnEnd(turn)
	if _, ok := end.Action.(*protocol.ChatTurnCancelledAction); !ok {
		t.Fatalf("turn ended with %s", end.Action.Type())
	}
	// The next turn starts at once; its prompt waits for the cancelled one
	// to answer, so the late chunks cannot land in it.
	next := a.startTurn(chat, "t2", "say again")
	// The activity shows the agent stopping, then clears.
	envs := b.WaitFor("activity cleared", func(envs []protocol.ActionEnvelope) bool {
		set := false
		for _, e := range envs {
			if a, ok := e.Action.(*protocol.ChatActivityChangedAction); ok {
				if a.Activity != nil {
					set = true
				} else if set {
					return true
				}
			}
		}
		return false
	})
	// Nothing was dispatched for the cancelled turn after it ended.
	for _, e := range envs {
		if e.ServerSeq <= end.ServerSeq {
			continue
		}
		var turnID string
		switch x := e.Action.(type) {
		case *protocol.ChatDeltaAction:
			turnID = x.TurnID
		case *protocol.ChatResponsePartAction:
			turnID = x.TurnID
		case *protocol.ChatTurnCompleteAction:
			turnID = x.TurnID
		case *protocol.ChatErrorAction:
			turnID = x.TurnID
		}
		if turnID == turn {
			t.Errorf("%s for the cancelled turn after it ended", e.Action.Type())
		}
	}
	if _, ok := a.waitTurnEnd(next).Action.(*protocol.ChatTurnCompleteAction); !ok {
		t.Fatal("the next turn failed")
	}
	st := th.chatState(t, chat)
	if got := markdown(finishedTurn(t, st, turn).ResponseParts); strings.Contains(got, "late") {
		t.Errorf("late chunks reached the cancelled turn: %q", got)
	}
	if got := markdown(finishedTurn(t, st, next).ResponseParts); got != "again" {
		t.Errorf("next reply %q", got)
	}
}

// TestCancelTimeoutRestarts: an agent that ignores session/cancel is
// restarted after the cancel timeout, and the next turn runs on the new
// process.
func TestCancelTimeoutRestarts(t *testing.T) {
	th := startHost(t, newBackend(t, &acp.Options{CancelTimeout: 300 * time.Millisecond, KillTimeout: 500 * time.Millisecond}))
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", t.TempDir())
	turn := a.startTurn(chat, "t1", "say waiting\nhang")
	a.WaitFor("first chunk", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if _, ok := e.Action.(*protocol.ChatResponsePartAction); ok {
				return true
			}
		}
		return false
	})
	a.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: turn})
	a.waitTurnEnd(turn)
	next := a.startTurn(chat, "t2", "say fresh")
	end := a.waitTurnEnd(next)
	if _, ok := end.Action.(*protocol.ChatTurnCompleteAction); !ok {
		t.Fatalf("next turn ended with %+v", end.Action)
	}
}

// TestCrashMidTurn: a crash ends the running turn with chat/error quoting
// the agent's exit and stderr, marks the session, and the next turn
// restarts the agent until the restart limit.
func TestCrashMidTurn(t *testing.T) {
	th := startHost(t, newBackend(t, &acp.Options{MaxRestarts: 1}))
	a := th.dial(t, "a")
	sess, chat := a.newSession("s1", "test", t.TempDir())
	turn := a.startTurn(chat, "t1", "crash")
	end := a.waitTurnEnd(turn)
	e, ok := end.Action.(*protocol.ChatErrorAction)
	if !ok {
		t.Fatalf("turn ended with %s", end.Action.Type())
	}
	if e.Info().ErrorType != "agentCrashed" || !strings.Contains(e.Info().Message, "exit status 3") ||
		!strings.Contains(e.Info().Message, "crashing on purpose") || !strings.Contains(e.Info().Message, "restarted") {
		t.Errorf("error %+v", e.Info())
	}
	st := th.chatState(t, chat)
	if tr := finishedTurn(t, st, turn); markdown(tr.ResponseParts) != "about to crash" {
		t.Errorf("parts before the crash lost: %q", markdown(tr.ResponseParts))
	}
	var list protocol.ListSessionsResult
	a.Must("listSessions", &protocol.ListSessionsParams{}, &list)
	if len(list.Items) != 1 || list.Items[0].Resource != sess || list.Items[0].Status&protocol.SessionStatusError == 0 {
		t.Errorf("session summary %+v lacks the error bit", list.Items)
	}

	// One restart is allowed.
	next := a.startTurn(chat, "t2", "say back")
	if end := a.waitTurnEnd(next); end.Action.Type() != "chat/turnComplete" {
		t.Fatalf("the turn after the crash failed: %+v", end.Action)
	}
	// A second crash, then no more restarts.
	crash2 := a.startTurn(chat, "t3", "crash")
	// The last crash allowed does not promise a restart.
	if e := turnError(t, a.waitTurnEnd(crash2)); strings.Contains(e.Message, "will be restarted") || !strings.Contains(e.Message, "not restarted again") {
		t.Errorf("the last crash allowed says %q", e.Message)
	}
	last := a.startTurn(chat, "t4", "say again")
	end = a.waitTurnEnd(last)
	if e, ok := end.Action.(*protocol.ChatErrorAction); !ok || !strings.Contains(e.Info().Message, "not restarted again") {
		t.Fatalf("turn after the restart limit: %+v", end.Action)
	}
}

// TestDisposeKillsProcessGroup: disposing the session ends the agent and
// the processes it started.
func TestDisposeKillsProcessGroup(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	sess, chat := a.newSession("s1", "test", t.TempDir())
	turn := a.startTurn(chat, "t1", "child")
	a.waitTurnEnd(turn)
	reply := markdown(finishedTurn(t, th.chatState(t, chat), turn).ResponseParts)
	pid, err := strconv.Atoi(strings.TrimPrefix(reply, "child "))
	if err != nil {
		t.Fatalf("reply %q", reply)
	}
	if !alive(pid) {
		t.Fatal("the child is not running")
	}
	a.Must("disposeSession", &protocol.DisposeSessionParams{Channel: sess}, nil)
	if !exits(t, pid, 10*time.Second) {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
		t.Fatal("the agent's child survived the session")
	}
}

// TestUnknownUpdateKinds: updates of kinds the SDK does not know are
// skipped, never shown as content.
func TestUnknownUpdateKinds(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", t.TempDir())
	turn := a.startTurn(chat, "t1", "unknown\nsay ok\nplan")
	a.waitTurnEnd(turn)
	tr := finishedTurn(t, th.chatState(t, chat), turn)
	if got := markdown(tr.ResponseParts); got != "ok" || len(tr.ResponseParts) != 1 {
		t.Errorf("parts %+v (%q)", tr.ResponseParts, got)
	}
}

// TestSessionLevelUpdates: title, commands and modes reach the session.
func TestSessionLevelUpdates(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	sess, chat := a.newSession("s1", "test", t.TempDir())
	// The commands the agent announced before answering session/new show.
	// a subscribed before this snapshot: a later change reaches it.
	if len(th.sessionState(t, sess).Customizations) != 2 {
		a.WaitFor("the announced commands", func(envs []protocol.ActionEnvelope) bool {
			for _, e := range envs {
				if c, ok := e.Action.(*protocol.SessionCustomizationsChangedAction); ok && len(c.Customizations) == 2 {
					return true
				}
			}
			return false
		})
	}
	turn := a.startTurn(chat, "t1", "title Fixing the bug\ncommands\nmode code\nsay ok")
	a.waitTurnEnd(turn)
	st := th.sessionState(t, sess)
	if st.Title != "Fixing the bug" {
		t.Errorf("title %q", st.Title)
	}
	var got []string
	for _, c := range st.Customizations {
		p := c.(*protocol.PluginCustomization)
		for _, ch := range p.Children {
			switch x := ch.(type) {
			case *protocol.AgentCustomization:
				got = append(got, p.ID+":"+x.Name)
			case *protocol.SkillCustomization:
				got = append(got, p.ID+":"+x.Name)
			}
		}
	}
	if diff := cmp.Diff([]string{"acp-modes:Ask", "acp-modes:Code", "acp-commands:/review", "acp-commands:/test"}, got); diff != "" {
		t.Errorf("customizations (-want +got):\n%s", diff)
	}
}

// TestModeAndModelSelection: a message's agent and model selection switch
// the ACP session's mode and model before the prompt.
func TestModeAndModelSelection(t *testing.T) {
	dir := t.TempDir()
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", dir)
	msg := userMessage("state")
	msg.Agent = &protocol.AgentSelection{URI: "acp:mode/code"}
	msg.Model = &protocol.ModelSelection{ID: "large"}
	a.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()), Message: msg})
	a.waitTurnEnd("t1")
	got := markdown(finishedTurn(t, th.chatState(t, chat), "t1").ResponseParts)
	if want := "mode=code model=large effort=medium cwd=" + dir; got != want {
		t.Errorf("state %q, want %q", got, want)
	}
}

// TestSecondChat: a chat created later gets its own ACP session on the
// same process.
func TestSecondChat(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	sess, chat := a.newSession("s1", "test", t.TempDir())
	chat2 := protocol.ChatURI("second")
	a.Must("createChat", &protocol.CreateChatParams{Channel: sess, Chat: chat2}, nil)
	a.Subscribe(chat2)
	t1 := a.startTurn(chat, "t1", "slow 10")
	t2 := a.startTurn(chat2, "t2", "say other")
	a.waitTurnEnd(t1)
	a.waitTurnEnd(t2)
	if got := markdown(finishedTurn(t, th.chatState(t, chat2), t2).ResponseParts); got != "other" {
		t.Errorf("second chat reply %q", got)
	}
	if got := markdown(finishedTurn(t, th.chatState(t, chat), t1).ResponseParts); !strings.HasSuffix(got, " w10") || strings.Contains(got, "other") {
		t.Errorf("first chat reply %q", got)
	}
}

// TestStopReasons maps ACP stop reasons to how the turn ends.
func TestStopReasons(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", t.TempDir())
	cases := []struct{ reason, want string }{
		{"end_turn", "chat/turnComplete"},
		{"max_tokens", "chat/error"},
		{"refusal", "chat/error"},
		{"cancelled", "chat/turnCancelled"},
	}
	for i, tc := range cases {
		turn := a.startTurn(chat, "t"+strconv.Itoa(i), "say x\nstop "+tc.reason)
		if got := a.waitTurnEnd(turn).Action.Type(); got != tc.want {
			t.Errorf("%s: turn ended with %s, want %s", tc.reason, got, tc.want)
		}
	}
}

// TestWorkingDirectoryPolicy checks where sessions run.
func TestWorkingDirectoryPolicy(t *testing.T) {
	fixed := t.TempDir()
	cfg := testConfig("fixed")
	cfg.WorkingDirectory = acp.WorkingDirectory{Policy: acp.PolicyFixed, Directory: fixed}
	bf, err := acp.New(cfg, testOptions(t))
	must(t, err)
	req := testConfig("require")
	req.WorkingDirectory = acp.WorkingDirectory{Policy: acp.PolicyRequire}
	br, err := acp.New(req, testOptions(t))
	must(t, err)
	th := startHost(t, bf, br)
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "fixed", t.TempDir())
	a.startTurn(chat, "t1", "state")
	a.waitTurnEnd("t1")
	if got := markdown(finishedTurn(t, th.chatState(t, chat), "t1").ResponseParts); !strings.HasSuffix(got, "cwd="+fixed) {
		t.Errorf("fixed policy: %q", got)
	}
	uri := protocol.SessionURI("s2")
	a.Must("createSession", &protocol.CreateSessionParams{Channel: uri, Provider: protocol.Ptr("require")}, nil)
	st := a.Subscribe(uri).State.(*protocol.SessionState)
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		a.WaitFor("creation failed", func(envs []protocol.ActionEnvelope) bool {
			return slices.ContainsFunc(envs, func(e protocol.ActionEnvelope) bool { return e.Action.Type() == "session/creationFailed" })
		})
		st = th.sessionState(t, uri)
	}
	if st.CreationError == nil || !strings.Contains(st.CreationError.Message, "needs a working directory") {
		t.Errorf("creation error %+v", st.CreationError)
	}
}

// TestQuietTurn: a turn whose agent sends nothing for QuietAfter says so
// in the chat's activity, to every client, until the agent speaks again
// or the turn ends.
func TestQuietTurn(t *testing.T) {
	th := startHost(t, newBackend(t, &acp.Options{QuietAfter: 200 * time.Millisecond}))
	a := th.dial(t, "a")
	b := th.dial(t, "b")
	sess, chat := a.newSession("s1", "test", t.TempDir())
	b.join(sess)
	quiet := func(envs []protocol.ActionEnvelope) int {
		for i, e := range envs {
			if x, ok := e.Action.(*protocol.ChatActivityChangedAction); ok && x.Activity != nil && strings.HasPrefix(*x.Activity, "No output from the agent for ") {
				return i
			}
		}
		return -1
	}
	turn := a.startTurn(chat, "t1", "hang")
	envs := b.WaitFor("the quiet notice", func(envs []protocol.ActionEnvelope) bool { return quiet(envs) >= 0 })
	if i := quiet(envs); turnEnd(envs[:i], turn) != nil {
		t.Fatal("the notice came after the turn ended")
	}
	b.Dispatch(chat, &protocol.ChatTurnCancelledAction{TurnID: turn})
	b.waitTurnEnd(turn)
	// The cancel replaces the notice.
	b.WaitFor("the agent to stop", func(envs []protocol.ActionEnvelope) bool {
		return th.chatState(t, chat).Activity == nil
	})
	// A turn that talks gets no notice.
	turn = a.startTurn(chat, "t2", "say hello")
	b.waitTurnEnd(turn)
	if st := th.chatState(t, chat); st.Activity != nil {
		t.Errorf("activity %q after the turn", *st.Activity)
	}
}

// TestFileSystemDisabled: an agent configured without the client file
// system gets method-not-found for reads and writes, and nothing is
// written.
func TestFileSystemDisabled(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("line1\n"), 0o644))
	cfg := testConfig("test")
	cfg.DisableFileSystem = true
	b, err := acp.New(cfg, &acp.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	th := startHost(t, b)
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", dir)
	turn := a.startTurn(chat, "t1", "read "+filepath.Join(dir, "a.txt")+"\nwrite "+filepath.Join(dir, "b.txt")+" hello")
	a.waitTurnEnd(turn)
	got := markdown(finishedTurn(t, th.chatState(t, chat), turn).ResponseParts)
	if strings.Contains(got, "line1") || strings.Count(got, "Method not found") != 2 {
		t.Errorf("reply:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt was written (%v)", err)
	}
}

// TestFailuresVisible: a session whose agent cannot open it is listed with
// the Error bit and the agent's own words; a failed prompt quotes the
// agent's stderr.
func TestFailuresVisible(t *testing.T) {
	cfg := testConfig("broken")
	cfg.Env[acptest.FailSessionEnv] = "Invalid API key · Please run /login"
	b, err := acp.New(cfg, &acp.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	th := startHost(t, b, newBackend(t, nil))
	a := th.dial(t, "a")
	uri := protocol.SessionURI("bad")
	a.Must("createSession", &protocol.CreateSessionParams{Channel: uri, Provider: protocol.Ptr("broken"), WorkingDirectories: []string{"file://" + t.TempDir()}}, nil)
	a.Subscribe(uri)
	a.WaitFor("the creation to fail", hosttest.HasType("session/creationFailed"))
	var list protocol.ListSessionsResult
	a.Must("listSessions", &protocol.ListSessionsParams{}, &list)
	if len(list.Items) != 1 {
		t.Fatalf("sessions %+v", list.Items)
	}
	sum := list.Items[0]
	if sum.Status&protocol.SessionStatusError == 0 || sum.Activity == nil || !strings.Contains(*sum.Activity, "Invalid API key · Please run /login") ||
		!strings.Contains(*sum.Activity, "Query closed before response received") {
		t.Errorf("summary status %d activity %v", sum.Status, sum.Activity)
	}

	// A prompt that fails quotes what the agent wrote to stderr meanwhile.
	c := th.dial(t, "c")
	_, chat := c.newSession("s2", "test", t.TempDir())
	turn := c.startTurn(chat, "t1", "fail Rate limited by the gateway")
	end := c.waitTurnEnd(turn)
	e, ok := end.Action.(*protocol.ChatErrorAction)
	if !ok || e.Error == nil { // the 0.8.0 shape, which these clients speak
		t.Fatalf("turn ended with %+v", end.Action)
	}
	if msg := e.Error.Message; !strings.Contains(msg, "process exited with code 1") || !strings.Contains(msg, "Rate limited by the gateway") {
		t.Errorf("turn failed with %q", msg)
	}
}

// TestProbeSessionError: a probed agent that cannot open a session says
// why, in its own words.
func TestProbeSessionError(t *testing.T) {
	cfg := testConfig("broken")
	cfg.Env[acptest.FailSessionEnv] = "Not logged in · Please run /login"
	b, err := acp.New(cfg, &acp.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Probe(t.Context()); err != nil {
		t.Fatal(err)
	}
	if why := b.SessionError(); !strings.Contains(why, "Query closed before response received") || !strings.Contains(why, "Not logged in · Please run /login") {
		t.Errorf("SessionError %q", why)
	}
	if why := newBackend(t, nil).SessionError(); why != "" {
		t.Errorf("an agent not probed: %q", why)
	}
}

// TestModelOption: an agent that offers its models only as a config
// option of category "model" lists them as its models, and a message's
// model selection sets that option.
func TestModelOption(t *testing.T) {
	cfg := testConfig("test")
	cfg.Env[acptest.ModelOptionEnv] = "1"
	b, err := acp.New(cfg, &acp.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Probe(t.Context()); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range b.Info().Models {
		ids = append(ids, m.ID+"/"+m.Name)
	}
	if want := []string{"small/Small", "large/Large"}; !slices.Equal(ids, want) {
		t.Errorf("models %v, want %v", ids, want)
	}
	dir := t.TempDir()
	th := startHost(t, b)
	a := th.dial(t, "a")
	sess, chat := a.newSession("s1", "test", dir)
	msg := userMessage("state")
	msg.Model = &protocol.ModelSelection{ID: "large"}
	a.Dispatch(chat, &protocol.ChatTurnStartedAction{TurnID: "t1", StartedAt: protocol.FormatTime(time.Now()), Message: msg})
	a.waitTurnEnd("t1")
	if got, want := markdown(finishedTurn(t, th.chatState(t, chat), "t1").ResponseParts), "mode=ask model=large effort=medium cwd="+dir; got != want {
		t.Errorf("state %q, want %q", got, want)
	}
	a.WaitFor("the session's model to change", func([]protocol.ActionEnvelope) bool {
		return string(th.sessionState(t, sess).Config.Values["model"]) == `"large"`
	})
}
