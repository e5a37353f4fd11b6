package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/workspace"
	"github.com/ahp-go/ahp/workspace/files"
)

// confinedHost serves a host on st whose agent takes several working
// directories and chats, with a workspace confined to roots (none: not
// confined).
func confinedHost(t *testing.T, st store.Store, roots ...string) *hosttest.Server {
	t.Helper()
	h, err := host.New(&host.Options{
		Store:     st,
		Agents:    []agent.Backend{multiDir{echo.New(&echo.Options{WordDelay: -1})}},
		Workspace: workspace.New(&workspace.Options{Roots: roots, Shell: []string{"/bin/sh"}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return hosttest.Serve(t, h)
}

// rejection waits for the rejection of the client's action seq and
// returns its reason ("" when the action was accepted).
func rejection(c *hosttest.Client, seq int64) string {
	var reason string
	c.WaitFor("the action's outcome", func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if e.Origin != nil && e.Origin.ClientID == c.ID && e.Origin.ClientSeq == seq {
				reason = ""
				if e.RejectionReason != nil {
					reason = *e.RejectionReason
				}
				return true
			}
		}
		return false
	})
	return reason
}

// TestRootsConfine: with roots, every way of giving a session, chat or
// terminal a working directory takes only directories inside them, once
// symbolic links are resolved, and refuses others with -32602 naming the
// roots. A session made before the roots were set keeps its directory
// but reaches nothing through it.
func TestRootsConfine(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	in := filepath.Join(root, "in")
	for _, d := range []string{in, outside, root + "x"} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600))
	must(t, os.Symlink(outside, filepath.Join(root, "out-link")))
	must(t, os.Symlink(in, filepath.Join(outside, "in-link")))
	must(t, os.Symlink(filepath.Join(root, "nothing"), filepath.Join(root, "dangling")))

	// A session made while nothing was confined, at the outside
	// directory, with a second chat.
	st := store.NewMemory()
	legacy := protocol.SessionURI("legacy")
	legacyChat := protocol.ChatURI("legacy-chat")
	{
		srv := confinedHost(t, st)
		c := srv.Dial(t, "before")
		initialize(t, c)
		createSession(t, c, "legacy", outside)
		c.Must("createChat", &protocol.CreateChatParams{Channel: legacy, Chat: legacyChat}, nil)
		srv.Host.Close()
	}

	srv := confinedHost(t, st, root)
	c := srv.Dial(t, "c")
	initialize(t, c)
	refused := func(t *testing.T, what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		e := rpcCode(t, err)
		if e.Code != protocol.CodeInvalidParams || !strings.Contains(e.Message, root) {
			t.Fatalf("%s: %v, want -32602 naming the root %s", what, e, root)
		}
	}

	dirs := []struct {
		name string
		uri  string
		ok   bool
	}{
		{"the root", files.URIOf(root), true},
		{"inside", files.URIOf(in), true},
		{"yet to be made inside", files.URIOf(filepath.Join(in, "new", "dir")), true},
		{"a link from outside to inside", files.URIOf(filepath.Join(outside, "in-link")), true},
		{"outside", files.URIOf(outside), false},
		{"the file system's root", "file:///", false},
		{"a sibling sharing the root's prefix", files.URIOf(root + "x"), false},
		{"a link inside to outside", files.URIOf(filepath.Join(root, "out-link")), false},
		{"yet to be made under a link to outside", files.URIOf(filepath.Join(root, "out-link", "new")), false},
		{"a dangling link", files.URIOf(filepath.Join(root, "dangling")), false},
		{"a parent segment", files.URIOf(in) + "/../..", false},
		{"not a file: URI", "https://example.com/", false},
	}
	t.Run("createSession", func(t *testing.T) {
		for i, d := range dirs {
			uri := protocol.SessionURI("s" + string(rune('a'+i)))
			err := c.Call("createSession", &protocol.CreateSessionParams{Channel: uri, WorkingDirectories: []string{d.uri}}, nil)
			if d.ok && err != nil {
				t.Errorf("%s: %v", d.name, err)
			} else if !d.ok {
				refused(t, d.name, err)
			}
		}
		// Every directory counts, not only the first.
		err := c.Call("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("two"), WorkingDirectories: []string{files.URIOf(in), files.URIOf(outside)}}, nil)
		refused(t, "a second directory outside", err)
		// A session without a directory has none to confine.
		c.Must("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("none")}, nil)
	})

	sess := protocol.SessionURI("main")
	c.Must("createSession", &protocol.CreateSessionParams{Channel: sess, WorkingDirectories: []string{files.URIOf(root), files.URIOf(in)}}, nil)
	c.Subscribe(sess)

	t.Run("createChat", func(t *testing.T) {
		for i, d := range dirs {
			chat := protocol.ChatURI("c" + string(rune('a'+i)))
			err := c.Call("createChat", &protocol.CreateChatParams{Channel: sess, Chat: chat, WorkingDirectories: []string{d.uri}}, nil)
			switch {
			case !d.ok:
				refused(t, d.name, err)
			case d.uri == files.URIOf(root) || d.uri == files.URIOf(in):
				if err != nil {
					t.Errorf("%s: %v", d.name, err)
				}
			default:
				// Inside the roots but not one of the session's
				// directories: the session's rule refuses it.
				if e := rpcCode(t, err); e.Code != protocol.CodeInvalidParams || strings.Contains(e.Message, "outside the roots") {
					t.Errorf("%s: %v, want the session's rule", d.name, e)
				}
			}
		}
	})

	t.Run("working directory actions", func(t *testing.T) {
		chat := protocol.ChatURI("ca") // made above, in the root
		c.Subscribe(chat)
		for _, d := range dirs {
			for _, a := range []struct {
				channel string
				action  protocol.StateAction
			}{
				{sess, &protocol.SessionWorkingDirectorySetAction{Directory: d.uri}},
				{sess, &protocol.SessionWorkingDirectoryReplacedAction{Directory: files.URIOf(in), Replacement: d.uri}},
				{chat, &protocol.ChatWorkingDirectorySetAction{Directory: d.uri}},
			} {
				// Inside the roots the action meets the session's
				// and chat's own rules only.
				reason := rejection(c, c.Dispatch(a.channel, a.action))
				if confined := strings.Contains(reason, "working directories must be inside "+root); confined == d.ok {
					t.Errorf("%s, %s: rejection %q", d.name, a.action.Type(), reason)
				}
			}
		}
		// A directory inside is taken.
		newDir := files.URIOf(filepath.Join(in, "more"))
		if reason := rejection(c, c.Dispatch(sess, &protocol.SessionWorkingDirectorySetAction{Directory: newDir})); reason != "" {
			t.Fatalf("a directory inside: rejected: %q", reason)
		}
	})

	t.Run("moveChat", func(t *testing.T) {
		err := c.Call("moveChat", &protocol.MoveChatParams{Channel: legacyChat, Destination: &protocol.ChatMoveToNewSessionDestination{}}, nil)
		refused(t, "a chat of a session outside the roots, to a new session", err)
		movable := protocol.ChatURI("movable")
		c.Must("createChat", &protocol.CreateChatParams{Channel: sess, Chat: movable}, nil)
		var res protocol.MoveChatResult
		c.Must("moveChat", &protocol.MoveChatParams{Channel: movable, Destination: &protocol.ChatMoveToNewSessionDestination{}}, &res)
		if res.Session == "" {
			t.Fatalf("moveChat answered %+v", res)
		}
	})

	t.Run("createTerminal", func(t *testing.T) {
		for i, d := range dirs {
			uri := "ahp-terminal:/t" + string(rune('a'+i))
			err := c.Call("createTerminal", &protocol.CreateTerminalParams{Channel: uri, Claim: &protocol.TerminalClientClaim{ClientID: "c"}, Cwd: protocol.Ptr(d.uri)}, nil)
			if !d.ok {
				refused(t, d.name, err)
				continue
			}
			if d.name == "a link from outside to inside" {
				// The files' scope takes no path through a name
				// outside it.
				if e := rpcCode(t, err); e.Code != protocol.CodePermissionDenied {
					t.Errorf("%s: %v", d.name, e)
				}
				continue
			}
			if strings.Contains(d.name, "yet to be made") {
				if e := rpcCode(t, err); e.Code == protocol.CodeInvalidParams && strings.Contains(e.Message, "outside the roots") {
					t.Errorf("%s: %v", d.name, e)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", d.name, err)
			}
		}
		// The legacy session's terminal would start outside.
		err := c.Call("createTerminal", &protocol.CreateTerminalParams{Channel: "ahp-terminal:/legacy", Claim: &protocol.TerminalSessionClaim{Session: legacy}}, nil)
		refused(t, "a terminal of a session outside the roots", err)
	})

	t.Run("files of a session outside the roots", func(t *testing.T) {
		err := c.Call("resourceRead", &protocol.ResourceReadParams{URI: files.URIOf(filepath.Join(outside, "secret"))}, nil)
		if e := rpcCode(t, err); e.Code != protocol.CodePermissionDenied {
			t.Fatalf("read in the legacy session's directory: %v", e)
		}
	})
}

// TestUnconfinedWithoutRoots: without roots any directory is taken, as
// before.
func TestUnconfinedWithoutRoots(t *testing.T) {
	outside := t.TempDir()
	srv := confinedHost(t, store.NewMemory())
	c := srv.Dial(t, "c")
	initialize(t, c)
	createSession(t, c, "anywhere", outside)
	c.Must("createSession", &protocol.CreateSessionParams{Channel: protocol.SessionURI("slash"), WorkingDirectories: []string{"file:///"}}, nil)
	c.Must("createTerminal", &protocol.CreateTerminalParams{Channel: "ahp-terminal:/t", Claim: &protocol.TerminalClientClaim{ClientID: "c"}, Cwd: protocol.Ptr(files.URIOf(outside))}, nil)
}

// TestTerminalsShared: terminals are shared between the connected
// clients. Another client sees a client-claimed terminal's output and
// types into it; only the claim itself stays its holder's to give away.
func TestTerminalsShared(t *testing.T) {
	srv := confinedHost(t, store.NewMemory(), t.TempDir())
	alice, bob := srv.Dial(t, "alice"), srv.Dial(t, "bob")
	initialize(t, alice)
	initialize(t, bob)
	uri := "ahp-terminal:/shared"
	alice.Must("createTerminal", &protocol.CreateTerminalParams{Channel: uri, Claim: &protocol.TerminalClientClaim{ClientID: "alice"}}, nil)
	alice.Subscribe(uri)
	bob.Subscribe(uri)

	seq := bob.Dispatch(uri, &protocol.TerminalInputAction{Data: "echo typed-by-$((40+2))\n"})
	if reason := rejection(bob, seq); reason != "" {
		t.Fatalf("bob's input rejected: %q", reason)
	}
	alice.WaitFor("bob's command's output at alice", func(envs []protocol.ActionEnvelope) bool {
		return strings.Contains(output(envs, uri), "typed-by-42")
	})
	seq = bob.Dispatch(uri, &protocol.TerminalResizedAction{Cols: 90, Rows: 20})
	if reason := rejection(bob, seq); reason != "" {
		t.Fatalf("bob's resize rejected: %q", reason)
	}
	seq = bob.Dispatch(uri, &protocol.TerminalClaimedAction{Claim: &protocol.TerminalClientClaim{ClientID: "bob"}})
	if reason := rejection(bob, seq); !strings.Contains(reason, `claimed by client "alice"`) {
		t.Fatalf("bob took alice's claim: %q", reason)
	}
}
