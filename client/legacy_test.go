package client_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// TestMovedChatKeepsItsSubscription: a chat that moves to another session
// (moveChat) leaves its session's catalog with session/chatRemoved, as a
// disposed chat does, but lives on under its URI: the client's
// subscription to it goes on, and ends only once the chat is disposed.
func TestMovedChatKeepsItsSubscription(t *testing.T) {
	th := startHost(t, nil)
	c := dial(t, th.url, nil)
	ctx := testCtx(t)
	src, _ := newSession(t, c)
	dst, _ := newSession(t, c)
	uri := protocol.ChatURI(client.NewID())
	if err := c.CreateChat(ctx, &protocol.CreateChatParams{Channel: src.Channel(), Chat: uri}); err != nil {
		t.Fatal(err)
	}
	chat := subscribe(t, c, uri)
	res, err := c.MoveChat(ctx, &protocol.MoveChatParams{Channel: uri, Destination: &protocol.ChatMoveToSessionDestination{Session: dst.Channel()}})
	if err != nil || res.Session != dst.Channel() {
		t.Fatalf("moveChat: %+v, %v", res, err)
	}
	waitState(t, dst, "the chat in the destination", func(s *protocol.SessionState) bool {
		return slices.ContainsFunc(s.Chats, func(c protocol.ChatSummary) bool { return c.Resource == uri })
	})
	waitState(t, src, "the chat gone from the source", func(s *protocol.SessionState) bool {
		return !slices.ContainsFunc(s.Chats, func(c protocol.ChatSummary) bool { return c.Resource == uri })
	})
	if _, err := c.Dispatch(ctx, uri, turnStarted("t1", "after the move")); err != nil {
		t.Fatal(err)
	}
	waitState(t, chat, "a turn after the move", turnDone("t1"))
	if err := chat.Err(); err != nil {
		t.Fatalf("the moved chat's subscription ended: %v", err)
	}
	if err := c.DisposeChat(ctx, &protocol.DisposeChatParams{Channel: uri}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-chat.Done():
	case <-ctx.Done():
		t.Fatal("the disposed chat's subscription did not end")
	}
	if !errors.Is(chat.Err(), client.ErrChannelGone) {
		t.Fatalf("the disposed chat's subscription ended with %v", chat.Err())
	}
}

// legacyHost is a minimal host over an in-memory transport that speaks
// only one older version's shapes: it records what the client sends and
// answers in the older shapes, so a client that failed to convert would
// be seen doing it.
type legacyHost struct {
	version string
	mu      sync.Mutex
	calls   map[string]jsontext.Value // method -> raw params
	conn    *jsonrpc.Conn
	ready   chan struct{}
}

func newLegacyHost(t *testing.T, version string) (*legacyHost, client.Dialer) {
	lh := &legacyHost{version: version, calls: map[string]jsontext.Value{}, ready: make(chan struct{})}
	dial := func(context.Context) (jsonrpc.Transport, error) {
		hostSide, clientSide := jsonrpc.Pipe()
		lh.conn = jsonrpc.NewConn(hostSide, jsonrpc.HandlerFunc(lh.handle), nil)
		t.Cleanup(func() { lh.conn.Close() })
		close(lh.ready)
		return clientSide, nil
	}
	return lh, dial
}

func (lh *legacyHost) sent(method string) string {
	lh.mu.Lock()
	defer lh.mu.Unlock()
	return string(lh.calls[method])
}

func (lh *legacyHost) handle(_ context.Context, req *jsonrpc.Request) (any, error) {
	lh.mu.Lock()
	lh.calls[req.Method] = req.Params
	lh.mu.Unlock()
	raw := func(s string) (any, error) { return jsontext.Value(s), nil }
	switch req.Method {
	case "initialize":
		var p protocol.InitializeParams
		if err := protocol.Unmarshal(req.Params, &p); err != nil || !slices.Contains(p.ProtocolVersions, lh.version) {
			return nil, &protocol.Error{Code: protocol.CodeUnsupportedProtocolVersion, Message: "no common version"}
		}
		return raw(`{"protocolVersion":"` + lh.version + `","serverSeq":1,"snapshots":[]}`)
	case "subscribe":
		return raw(`{"snapshot":{"resource":"ahp-root://","state":{"agents":[],"activeSessions":1},"fromSeq":1}}`)
	case "createSession":
		return nil, nil
	case "listSessions":
		return raw(`{"items":[{"resource":"ahp-session:/s","provider":"p","title":"S","status":1,"createdAt":"2026-01-01T00:00:00.000Z","modifiedAt":"2026-01-01T00:00:00.000Z","workingDirectory":"file:///w"}]}`)
	case "resourceRead":
		// -32006 is ContentNotFound before 0.9.0.
		return nil, &protocol.Error{Code: -32006, Message: "resourceRead: no such file"}
	}
	return nil, &protocol.Error{Code: protocol.CodeMethodNotFound, Message: req.Method}
}

// TestOlderHost: a 1.x client talking to a host that negotiated 0.8.0 or
// 0.5.1 converts what it sends down and what it receives up, with the
// conversions of protocol/view: createSession names one workingDirectory
// at 0.5.x (and the list at 0.8.0), authenticate leaves out expiresIn,
// listSessions and root/sessionAdded come up with their list of working
// directories, auth/required comes up with its resource as metadata, the
// older ContentNotFound (-32006) is NotFound, and the client's own
// Conflict answer (-32011) goes down as -32602.
func TestOlderHost(t *testing.T) {
	for _, version := range []string{"0.8.0", "0.5.1"} {
		t.Run(version, func(t *testing.T) {
			ctx := testCtx(t)
			lh, dial := newLegacyHost(t, version)
			c, err := client.ConnectTransport(ctx, dial, &client.Options{Handlers: client.Handlers{
				ResourceWrite: func(context.Context, *protocol.ResourceWriteParams) (*protocol.ResourceWriteResult, error) {
					return nil, &protocol.Error{Code: protocol.CodeConflict, Message: "resourceWrite: the file changed"}
				},
			}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			if res := c.InitializeResult(); res.ProtocolVersion != version {
				t.Fatalf("initialize: %+v", res)
			}
			if !strings.Contains(lh.sent("initialize"), `"protocolVersions":["`+protocol.ProtocolVersion+`"`) {
				t.Errorf("the client offered %s", lh.sent("initialize"))
			}

			if err := c.CreateSession(ctx, &protocol.CreateSessionParams{Channel: "ahp-session:/s", WorkingDirectories: []protocol.URI{"file:///w", "file:///x"}}); err != nil {
				t.Fatal(err)
			}
			sent := lh.sent("createSession")
			single := strings.Contains(sent, `"workingDirectory":"file:///w"`) && !strings.Contains(sent, "workingDirectories")
			if want := version == "0.5.1"; single != want {
				t.Errorf("createSession sent %s", sent)
			}
			if _, err := c.Authenticate(ctx, &protocol.AuthenticateParams{Resource: "https://mcp.example", Token: "t", ExpiresIn: protocol.Ptr(int64(60))}); err == nil {
				t.Error("the fake host's authenticate succeeded")
			}
			if sent := lh.sent("authenticate"); strings.Contains(sent, "expiresIn") || !strings.Contains(sent, "https://mcp.example") {
				t.Errorf("authenticate sent %s", sent)
			}

			page, err := c.ListSessions(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s := page.Items[0]; !slices.Equal(s.WorkingDirectories, []protocol.URI{"file:///w"}) || s.WorkingDirectory != nil {
				t.Errorf("listSessions gave %+v", s)
			}
			_, err = c.ResourceRead(ctx, &protocol.ResourceReadParams{URI: "file:///w/missing"})
			if !errors.Is(err, client.ErrNotFound) {
				t.Errorf("resourceRead: %v, want NotFound", err)
			}

			root := subscribe(t, c, protocol.RootURI)
			notify := func(method, params string) {
				t.Helper()
				if err := lh.conn.Notify(ctx, method, jsontext.Value(params)); err != nil {
					t.Fatal(err)
				}
			}
			notify("root/sessionAdded", `{"channel":"ahp-root://","summary":{"resource":"ahp-session:/t","provider":"p","title":"T","status":1,"createdAt":"2026-01-01T00:00:00.000Z","modifiedAt":"2026-01-01T00:00:00.000Z","workingDirectory":"file:///t"}}`)
			notify("auth/required", `{"channel":"ahp-root://","resource":"https://mcp.example","reason":"expired"}`)
			var added *protocol.SessionAddedParams
			var auth *protocol.AuthRequiredParams
			for auth == nil {
				ev, err := root.Next(ctx)
				if err != nil {
					t.Fatalf("waiting for the notifications: %v", err)
				}
				if ev.Notification == nil {
					continue
				}
				switch p := ev.Notification.Params.(type) {
				case *protocol.SessionAddedParams:
					added = p
				case *protocol.AuthRequiredParams:
					auth = p
				}
			}
			if added == nil || !slices.Equal(added.Summary.WorkingDirectories, []protocol.URI{"file:///t"}) {
				t.Errorf("root/sessionAdded came up as %+v", added)
			}
			if auth.Resource.Resource != "https://mcp.example" || auth.Reason == nil || *auth.Reason != protocol.AuthRequiredReasonExpired {
				t.Errorf("auth/required came up as %+v", auth)
			}

			// A request from the host: the client's Conflict goes down.
			err = lh.conn.Call(ctx, "resourceWrite", &protocol.ResourceWriteParams{URI: "file:///w/a", Data: "x", Encoding: protocol.ContentEncodingUtf8}, nil)
			var pe *protocol.Error
			if !errors.As(err, &pe) || pe.Code != protocol.CodeInvalidParams {
				t.Errorf("the client answered resourceWrite with %v, want -32602", err)
			}
		})
	}
}
