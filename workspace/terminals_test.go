package workspace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/internal/procexists"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
	"github.com/ahp-go/ahp/workspace"
	"github.com/ahp-go/ahp/workspace/files"
)

// output joins the terminal/data of a channel seen by a client.
func output(envs []protocol.ActionEnvelope, uri string) string {
	var b strings.Builder
	for _, e := range envs {
		if d, ok := e.Action.(*protocol.TerminalDataAction); ok && e.Channel == uri {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

func bashOptions(o *workspace.Options) *workspace.Options {
	if o == nil {
		o = &workspace.Options{}
	}
	o.Shell = []string{"/usr/bin/bash"}
	return o
}

func TestTerminalSharedLive(t *testing.T) {
	dir := t.TempDir()
	srv := startHost(t, nil, bashOptions(&workspace.Options{Scrollback: 64 << 10}))
	a, b := srv.Dial(t, "alice"), srv.Dial(t, "bob")
	initialize(t, a)
	initialize(t, b)
	a.Subscribe(protocol.RootURI)
	sess := createSession(t, a, "s1", dir)
	uri := "ahp-terminal:/t1"

	// A cwd outside the claim's scope is refused.
	err := a.Call("createTerminal", &protocol.CreateTerminalParams{Channel: uri, Claim: &protocol.TerminalClientClaim{ClientID: "alice"}, Cwd: protocol.Ptr(files.URIOf(os.TempDir()))}, nil)
	if e := rpcCode(t, err); e.Code != protocol.CodePermissionDenied {
		t.Fatalf("cwd outside the roots: %v", e)
	}
	// A client claim must name the creating client.
	err = a.Call("createTerminal", &protocol.CreateTerminalParams{Channel: uri, Claim: &protocol.TerminalClientClaim{ClientID: "bob"}, Cwd: protocol.Ptr(files.URIOf(dir))}, nil)
	if e := rpcCode(t, err); e.Code != protocol.CodeInvalidParams {
		t.Fatalf("foreign claim: %v", e)
	}

	a.Must("createTerminal", &protocol.CreateTerminalParams{Channel: uri, Claim: &protocol.TerminalSessionClaim{Session: sess}, Name: protocol.Ptr("build"), Cols: protocol.Ptr[int64](100), Rows: protocol.Ptr[int64](30)}, nil)
	a.WaitFor("the terminal in the root list", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if tc, ok := e.Action.(*protocol.RootTerminalsChangedAction); ok && len(tc.Terminals) == 1 && tc.Terminals[0].Resource == uri && tc.Terminals[0].Title == "build" {
				return true
			}
		}
		return false
	})
	snap := a.Subscribe(uri)
	ts := snap.State.(*protocol.TerminalState)
	if ts.Cwd == nil || *ts.Cwd != files.URIOf(dir) || *ts.Cols != 100 || ts.IsPty == nil || !*ts.IsPty {
		t.Fatalf("terminal state %+v", ts)
	}
	if _, ok := ts.Lifecycle.(*protocol.TerminalRunningLifecycleState); !ok {
		t.Fatalf("lifecycle %+v", ts.Lifecycle)
	}
	b.Subscribe(uri)
	// Shell integration reports itself once bash has drawn its prompt
	// (maybe before this client subscribed).
	waitUntil(t, "command detection", func() bool {
		ts := srv.Host.State(uri).(*protocol.TerminalState)
		return ts.SupportsCommandDetection != nil && *ts.SupportsCommandDetection
	})
	a.Dispatch(uri, &protocol.TerminalInputAction{Data: "echo hello-$((6*7)) $PPID\r"})
	envs := b.WaitFor("the echo at the second client", func(envs []protocol.ActionEnvelope) bool {
		return strings.Contains(output(envs, uri), "hello-42") && hasAction[*protocol.TerminalCommandFinishedAction](envs)
	})
	if strings.Contains(output(envs, uri), "\x1b]633") {
		t.Fatal("shell integration sequences reached a client")
	}
	var executed *protocol.TerminalCommandExecutedAction
	for _, e := range envs {
		if x, ok := e.Action.(*protocol.TerminalCommandExecutedAction); ok {
			executed = x
		}
	}
	if executed == nil || executed.CommandLine != "echo hello-$((6*7)) $PPID" {
		t.Fatalf("commandExecuted %+v", executed)
	}

	// The PTY follows terminal/resized.
	b.Dispatch(uri, &protocol.TerminalResizedAction{Cols: 77, Rows: 11})
	a.Dispatch(uri, &protocol.TerminalInputAction{Data: "stty size\r"})
	a.WaitFor("the new size", func(envs []protocol.ActionEnvelope) bool { return strings.Contains(output(envs, uri), "11 77") })

	// A late subscriber gets the retained output in its snapshot.
	late := srv.Dial(t, "carol")
	initialize(t, late)
	if got := reducer.TerminalOutput(late.Subscribe(uri).State.(*protocol.TerminalState)); !strings.Contains(got, "hello-42") {
		t.Fatalf("late snapshot lacks the output: %q", got)
	}

	// Claims: bob takes the terminal over from the session; then alice
	// cannot take it from bob.
	b.Dispatch(uri, &protocol.TerminalClaimedAction{Claim: &protocol.TerminalClientClaim{ClientID: "bob"}})
	b.WaitFor("bob's claim", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if c, ok := e.Action.(*protocol.TerminalClaimedAction); ok && e.RejectionReason == nil {
				if cc, ok := c.Claim.(*protocol.TerminalClientClaim); ok && cc.ClientID == "bob" {
					return true
				}
			}
		}
		return false
	})
	a.Dispatch(uri, &protocol.TerminalClaimedAction{Claim: &protocol.TerminalClientClaim{ClientID: "alice"}})
	a.WaitFor("alice's claim rejected", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if _, ok := e.Action.(*protocol.TerminalClaimedAction); ok && e.RejectionReason != nil && e.Origin != nil && e.Origin.ClientID == "alice" {
				return true
			}
		}
		return false
	})

	// Dispose ends the shell and everything it started.
	a.Dispatch(uri, &protocol.TerminalInputAction{Data: "sleep 1000 & echo bg=$!\r"})
	m := regexp.MustCompile(`bg=(\d+)`)
	var pid int
	a.WaitFor("the background pid", func(envs []protocol.ActionEnvelope) bool {
		if s := m.FindStringSubmatch(output(envs, uri)); s != nil {
			pid, _ = strconv.Atoi(s[1])
			return true
		}
		return false
	})
	a.Must("disposeTerminal", &protocol.DisposeTerminalParams{Channel: uri}, nil)
	waitGone(t, pid)
	a.WaitFor("the terminal gone from the root list", func(envs []protocol.ActionEnvelope) bool {
		tc, ok := envs[len(envs)-1].Action.(*protocol.RootTerminalsChangedAction)
		return ok && len(tc.Terminals) == 0
	})
	if e := rpcCode(t, a.Call("disposeTerminal", &protocol.DisposeTerminalParams{Channel: uri}, nil)); e.Code != protocol.CodeNotFound {
		t.Fatalf("second dispose: %v", e)
	}
}

func hasAction[T protocol.StateAction](envs []protocol.ActionEnvelope) bool {
	for _, e := range envs {
		if _, ok := e.Action.(T); ok {
			return true
		}
	}
	return false
}

// waitGone waits until pid is gone (or a zombie awaiting its reaper).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for procexists.Exists(pid) {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			s := string(b)
			if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 && s[i+2] == 'Z' {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d outlived its terminal", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Shutting the host down ends every terminal's processes; exit shows in
// the lifecycle; scrollback stays bounded.
func TestTerminalExitScrollbackAndShutdown(t *testing.T) {
	dir := t.TempDir()
	srv := startHost(t, nil, bashOptions(&workspace.Options{Roots: []string{dir}, Scrollback: 4 << 10}))
	c := srv.Dial(t, "c1")
	initialize(t, c)
	c.Must("createTerminal", &protocol.CreateTerminalParams{Channel: "ahp-terminal:/a", Claim: &protocol.TerminalClientClaim{ClientID: "c1"}}, nil)
	c.Subscribe("ahp-terminal:/a")
	c.Dispatch("ahp-terminal:/a", &protocol.TerminalInputAction{Data: "seq 1 20000; exit 5\r"})
	c.WaitFor("the exit", func(envs []protocol.ActionEnvelope) bool {
		return hasAction[*protocol.TerminalExitedAction](envs)
	})
	ts := srv.Host.State("ahp-terminal:/a").(*protocol.TerminalState)
	ex, ok := ts.Lifecycle.(*protocol.TerminalExitedLifecycleState)
	if !ok || ex.ExitCode == nil || *ex.ExitCode != 5 {
		t.Fatalf("lifecycle %+v", ts.Lifecycle)
	}
	if n := len(reducer.TerminalOutput(ts)); n > 4<<10+1<<10 {
		t.Fatalf("the host keeps %d bytes of scrollback, over the 4 KiB bound", n)
	}
	if got := reducer.TerminalOutput(ts); !strings.Contains(got, "20000") {
		t.Fatalf("the retained tail lacks the last line: %q", got[max(0, len(got)-200):])
	}
	// Input to an exited terminal is rejected.
	c.Dispatch("ahp-terminal:/a", &protocol.TerminalInputAction{Data: "x"})
	c.WaitFor("the rejection", func(envs []protocol.ActionEnvelope) bool {
		e := envs[len(envs)-1]
		return e.RejectionReason != nil
	})

	c.Must("createTerminal", &protocol.CreateTerminalParams{Channel: "ahp-terminal:/b", Claim: &protocol.TerminalClientClaim{ClientID: "c1"}}, nil)
	c.Subscribe("ahp-terminal:/b")
	c.Dispatch("ahp-terminal:/b", &protocol.TerminalInputAction{Data: "sleep 1000 & echo bg=$!\r"})
	m := regexp.MustCompile(`bg=(\d+)`)
	var pid int
	c.WaitFor("the background pid", func(envs []protocol.ActionEnvelope) bool {
		if s := m.FindStringSubmatch(output(envs, "ahp-terminal:/b")); s != nil {
			pid, _ = strconv.Atoi(s[1])
			return true
		}
		return false
	})
	if err := srv.Host.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	_ = filepath.Join
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Output that is not UTF-8 (a binary file printed, say) reaches
// subscribers and late joiners with U+FFFD in place of the bad bytes: an
// action whose data would not encode would reach nobody.
func TestTerminalOutputNotUTF8(t *testing.T) {
	const uri = "ahp-terminal:/bin"
	srv, c := shTerminal(t, uri)
	c.Dispatch(uri, &protocol.TerminalInputAction{Data: "printf 'A\\377\\376B\\n'\n"})
	c.WaitFor("the output", func(envs []protocol.ActionEnvelope) bool {
		return strings.Contains(output(envs, uri), "A\uFFFDB")
	})
	late := srv.Dial(t, "c2")
	initialize(t, late)
	if got := reducer.TerminalOutput(late.Subscribe(uri).State.(*protocol.TerminalState)); !strings.Contains(got, "A\uFFFDB") {
		t.Fatalf("a late subscriber's scrollback: %q", got)
	}
}

// A subscriber that stops reading makes the terminal pause once (flow
// control), not for good: the output goes on, and a subscriber that reads
// gets all of it.
func TestTerminalStalledSubscriber(t *testing.T) {
	const uri = "ahp-terminal:/flow"
	srv, c := shTerminal(t, uri)

	ctx, cancel := context.WithTimeout(context.Background(), hosttest.Timeout)
	defer cancel()
	stalled, _, err := websocket.Dial(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.CloseNow()
	for i, req := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":["` + protocol.SupportedVersions()[0] + `"],"clientId":"stalled"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"subscribe","params":{"channel":"` + uri + `"}}`,
	} {
		if err := stalled.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
			t.Fatal(i, err)
		}
	}
	waitUntil(t, "the stalled client's subscription", func() bool { return subscribers(srv, uri) == 2 })

	// 16 MB: more than the socket buffers and the flow control's mark.
	const lines = 160000
	c.Dispatch(uri, &protocol.TerminalInputAction{Data: fmt.Sprintf("seq -f %%099g 1 %d; exit 0\n", lines)})
	var seen atomic.Int64
	c.Watch(func(e *protocol.ActionEnvelope) {
		if d, ok := e.Action.(*protocol.TerminalDataAction); ok && e.Channel == uri {
			seen.Add(int64(strings.Count(d.Data, "\n")))
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for seen.Load() < lines {
		if time.Now().After(deadline) {
			t.Fatalf("the reading subscriber got %d of %d lines", seen.Load(), lines)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shTerminal starts a host whose shell is /bin/sh and a client c1 that
// creates the terminal uri, claimed by itself, and subscribes to it.
func shTerminal(t *testing.T, uri string) (*hosttest.Server, *hosttest.Client) {
	t.Helper()
	srv := startHost(t, nil, &workspace.Options{Roots: []string{t.TempDir()}, Shell: []string{"/bin/sh"}})
	c := srv.Dial(t, "c1")
	initialize(t, c)
	c.Must("createTerminal", &protocol.CreateTerminalParams{Channel: uri, Claim: &protocol.TerminalClientClaim{ClientID: "c1"}}, nil)
	c.Subscribe(uri)
	return srv, c
}
