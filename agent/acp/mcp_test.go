package acp_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/protocol"
)

// webMCP serves an MCP server over streamable HTTP whose tool "hello"
// answers with the Authorization header the request carried.
func webMCP(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "hello"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		auth := req.Extra.Header.Get("Authorization")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + auth}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// mcpBackend is the scripted agent (able to load sessions) with three MCP
// servers: "files" (stdio, the test binary as the MCP test server, with a
// secret in its environment), "web" (HTTP, with a secret header) and
// "legacy" (SSE, which the agent does not take).
func mcpBackend(t *testing.T, logger *slog.Logger, timeout time.Duration) *acp.Backend {
	t.Helper()
	t.Setenv("MCP_TEST_SECRET", "s3cr3t-env")
	t.Setenv("MCP_TEST_TOKEN", "s3cr3t-token")
	cfg := testConfig("test")
	cfg.Env[acptest.LoadSessionEnv] = "1"
	cfg.ClientToolTimeout = acp.Duration(timeout)
	cfg.MCPServers = []acp.MCPServer{
		{Name: "files", Command: os.Args[0], Args: []string{"-test.run=^$"},
			Env: map[string]string{acptest.MCPServerEnv: "1", "SECRET": "${MCP_TEST_SECRET}"}},
		{Name: "web", URL: webMCP(t), Headers: map[string]string{"Authorization": "Bearer $MCP_TEST_TOKEN"}},
		{Name: "legacy", Type: acp.MCPSSE, URL: "http://127.0.0.1:1/sse"},
	}
	b, err := acp.New(cfg, &acp.Options{Logger: logger, ExitGrace: testExitGrace})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mcpStates returns the state kind of each MCP server customization.
func mcpStates(st *protocol.SessionState) map[string]string {
	out := map[string]string{}
	for _, c := range st.Customizations {
		if m, ok := c.(*protocol.MCPServerCustomization); ok {
			out[m.Name] = m.State.Kind()
		}
	}
	return out
}

// TestConfiguredMCPServers: the servers of the configuration are listed in
// the session's customizations with their state, reach the agent in
// session/new with their secrets expanded (and never logged), and their
// tools answer the agent; a server a client turns off is gone from the
// chat's next prompt, and back when it is turned on again.
func TestConfiguredMCPServers(t *testing.T) {
	rec := &records{}
	th := startHost(t, mcpBackend(t, slog.New(rec), time.Minute))
	a := th.dialAt(t, "a", protocol.ProtocolVersion)
	uri, chat := a.newSession("s1", "test", t.TempDir())

	a.WaitFor("the MCP servers ready", func([]protocol.ActionEnvelope) bool {
		return mcpStates(th.sessionState(t, uri))["files"] == "ready"
	})
	want := map[string]string{"files": "ready", "web": "ready", "legacy": "error"}
	if got := mcpStates(th.sessionState(t, uri)); !maps(got, want) {
		t.Fatalf("MCP server states %v, want %v", got, want)
	}

	a.startTurn(chat, "t1", "mcp-servers\nmcp files echo {\"text\":\"hi\"}\nmcp files getenv {\"name\":\"SECRET\"}\nmcp web hello")
	a.waitTurnEnd("t1")
	got := markdown(finishedTurn(t, th.chatState(t, chat), "t1").ResponseParts)
	for _, w := range []string{
		"mcp servers: files, web, " + acp.ClientToolsServer,
		"files/echo: echo: hi",
		"files/getenv: s3cr3t-env",
		"web/hello: hello Bearer s3cr3t-token",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("the agent said %q, want it to say %q", got, w)
		}
	}

	// Turned off: stopped at once, left out of the next prompt's session.
	seq := a.Dispatch(uri, &protocol.SessionCustomizationToggledAction{ID: "mcp-files",
		Enablement: []protocol.CustomizationEnablement{&protocol.CustomizationEnablementSession{Enabled: false}}})
	// The toggle's echo, then the customizations it changed: seq is the
	// client's sequence number, not the host's.
	a.WaitFor("the toggle", func(envs []protocol.ActionEnvelope) bool {
		var toggled int64
		for _, e := range envs {
			if e.Origin != nil && e.Origin.ClientSeq == seq && e.Action.Type() == "session/customizationToggled" {
				toggled = e.ServerSeq
			}
			if c, ok := e.Action.(*protocol.SessionCustomizationsChangedAction); ok && toggled > 0 && e.ServerSeq > toggled &&
				mcpStates(&protocol.SessionState{Customizations: c.Customizations})["files"] == "stopped" {
				return true
			}
		}
		return false
	})
	if got := mcpStates(th.sessionState(t, uri))["files"]; got != "stopped" {
		t.Fatalf("turned off server is %q, want stopped", got)
	}
	a.startTurn(chat, "t2", "mcp-servers\nmcp files echo {\"text\":\"hi\"}")
	a.waitTurnEnd("t2")
	got = markdown(finishedTurn(t, th.chatState(t, chat), "t2").ResponseParts)
	if !strings.Contains(got, "mcp servers: web, "+acp.ClientToolsServer) || !strings.Contains(got, "files/echo failed") {
		t.Errorf("after turning files off the agent said %q", got)
	}

	a.Dispatch(uri, &protocol.SessionCustomizationToggledAction{ID: "mcp-files",
		Enablement: []protocol.CustomizationEnablement{&protocol.CustomizationEnablementSession{Enabled: true}}})
	a.startTurn(chat, "t3", "mcp files echo {\"text\":\"back\"}")
	a.waitTurnEnd("t3")
	if got := markdown(finishedTurn(t, th.chatState(t, chat), "t3").ResponseParts); !strings.Contains(got, "files/echo: echo: back") {
		t.Errorf("after turning files on again the agent said %q", got)
	}
	if got := mcpStates(th.sessionState(t, uri))["files"]; got != "ready" {
		t.Errorf("turned on server is %q, want ready", got)
	}

	// Stopped and started: the same, without touching the enablement.
	a.Dispatch(uri, &protocol.SessionMCPServerStopRequestedAction{ID: "mcp-web"})
	a.startTurn(chat, "t4", "mcp-servers")
	a.waitTurnEnd("t4")
	if got := markdown(finishedTurn(t, th.chatState(t, chat), "t4").ResponseParts); !strings.Contains(got, "mcp servers: files, "+acp.ClientToolsServer) {
		t.Errorf("after stopping web the agent said %q", got)
	}
	st := th.sessionState(t, uri)
	if got := mcpStates(st)["web"]; got != "stopped" {
		t.Errorf("stopped server is %q", got)
	}
	for _, c := range st.Customizations {
		if m, ok := c.(*protocol.MCPServerCustomization); ok && m.Name == "web" && len(m.Enablement) != 0 {
			t.Errorf("stopping changed the enablement: %+v", m.Enablement)
		}
	}
	a.Dispatch(uri, &protocol.SessionMCPServerStartRequestedAction{ID: "mcp-web"})
	a.startTurn(chat, "t5", "mcp web hello")
	a.waitTurnEnd("t5")
	if got := markdown(finishedTurn(t, th.chatState(t, chat), "t5").ResponseParts); !strings.Contains(got, "web/hello: hello Bearer") {
		t.Errorf("after starting web again the agent said %q", got)
	}
	if got := mcpStates(th.sessionState(t, uri))["web"]; got != "ready" {
		t.Errorf("started server is %q", got)
	}

	// An agent's tool call titled as Claude Code titles MCP tools names
	// the server's customization as its contributor.
	a.startTurn(chat, "t6", "autotool mcp__files__echo\nautotool mcp__other__echo")
	a.waitTurnEnd("t6")
	calls := toolCalls(finishedTurn(t, th.chatState(t, chat), "t6").ResponseParts)
	if len(calls) != 2 {
		t.Fatalf("tool calls %+v", calls)
	}
	if done, ok := calls[0].(*protocol.ToolCallCompletedState); !ok {
		t.Errorf("tool call %T", calls[0])
	} else if c, ok := done.Contributor.(*protocol.ToolCallMCPContributor); !ok || c.CustomizationID != "mcp-files" {
		t.Errorf("contributor %+v, want the customization mcp-files", done.Contributor)
	}
	if done, ok := calls[1].(*protocol.ToolCallCompletedState); !ok || done.Contributor != nil {
		t.Errorf("a tool of no configured server has contributor %+v", calls[1])
	}

	for _, line := range rec.all() {
		if strings.Contains(line, "s3cr3t") {
			t.Errorf("a secret was logged: %s", line)
		}
	}
	// Clients see the server's transport, not its command line, URL or
	// secrets.
	for _, c := range th.sessionState(t, uri).Customizations {
		if m, ok := c.(*protocol.MCPServerCustomization); ok {
			for k, v := range m.Meta {
				if strings.Contains(string(v), "s3cr3t") || strings.Contains(string(v), "127.0.0.1") {
					t.Errorf("customization %s shows %s=%s", m.ID, k, v)
				}
			}
		}
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestMCPServerConfigValidate: bad declarations are refused with the
// server's name, and without quoting its URL.
func TestMCPServerConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    acp.MCPServer
		want string // "" for valid
	}{
		{"stdio", acp.MCPServer{Name: "a", Command: "srv", Env: map[string]string{"K": "$V"}}, ""},
		{"http", acp.MCPServer{Name: "a", URL: "https://example.test/mcp", Headers: map[string]string{"Authorization": "x"}}, ""},
		{"expanded url", acp.MCPServer{Name: "a", URL: "${MCP_URL}"}, ""},
		{"sse", acp.MCPServer{Name: "a", Type: "sse", URL: "http://127.0.0.1:9/sse"}, ""},
		{"bad name", acp.MCPServer{Name: "a b", Command: "srv"}, "name"},
		{"nothing", acp.MCPServer{Name: "a"}, "needs a command"},
		{"both", acp.MCPServer{Name: "a", Command: "srv", URL: "http://x"}, "takes no command"},
		{"http without url", acp.MCPServer{Name: "a", Type: "http"}, "needs a url"},
		{"bad url", acp.MCPServer{Name: "a", URL: "ftp://secret@host/x"}, "absolute http"},
		{"bad header", acp.MCPServer{Name: "a", URL: "http://x", Headers: map[string]string{"A B": "x"}}, "header"},
		{"bad type", acp.MCPServer{Name: "a", Type: "ws", URL: "http://x"}, "unknown type"},
		{"bad env", acp.MCPServer{Name: "a", Command: "srv", Env: map[string]string{"A=B": "x"}}, "environment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error about %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret@") {
				t.Fatalf("the error quotes the URL: %v", err)
			}
		})
	}
	cfg := testConfig("x")
	cfg.MCPServers = []acp.MCPServer{{Name: "a", Command: "srv"}, {Name: "a", Command: "other"}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "two MCP servers") {
		t.Fatalf("duplicate names: %v", err)
	}
	cfg.MCPServers = []acp.MCPServer{{Name: acp.ClientToolsServer, Command: "srv"}}
	if err := cfg.Validate(); err == nil {
		t.Fatal("a server may not take the clients' tools server's name")
	}
	merged := acp.MergeMCPServers([]acp.MCPServer{{Name: "a", Command: "shared"}, {Name: "b", Command: "shared"}}, []acp.MCPServer{{Name: "a", Command: "own"}})
	if len(merged) != 2 || merged[0].Name != "b" || merged[1].Command != "own" {
		t.Fatalf("merged %+v", merged)
	}
}
