package acptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP.
//
// The agent advertises HTTP MCP servers (mcpCapabilities.http) and keeps
// the mcpServers each session was created or loaded with. Two commands
// use them:
//
//	mcp-servers                 says "mcp servers: NAME, NAME" (or "none")
//	mcp SERVER TOOL [JSON]      calls TOOL of the named server with the
//	                            JSON object as arguments, and says
//	                            "SERVER/TOOL: TEXT" with the text of the
//	                            result, or "SERVER/TOOL failed: TEXT"
//
// With MCPServerEnv set to "1", ServeIfAsked serves a small MCP server on
// stdin and stdout instead of the agent (see ServeMCP).

// MCPServerEnv, set to "1", makes ServeIfAsked run the MCP test server.
const MCPServerEnv = "AHP_ACPTEST_MCP_SERVER"

// ServeMCP serves the MCP test server on stdin and stdout until the client
// leaves. Its tools: "echo" ({"text"}) answers "echo: TEXT", and "getenv"
// ({"name"}) answers the value of that variable of its environment.
func ServeMCP(ctx context.Context) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "acptest-mcp", Version: Version}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Says the text back"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	type envIn struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "getenv", Description: "Reads a variable of the server's environment"}, func(_ context.Context, _ *mcp.CallToolRequest, in envIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: os.Getenv(in.Name)}}}, nil, nil
	})
	return s.Run(ctx, &mcp.StdioTransport{})
}

// mcpServers says the names of the session's MCP servers.
func (r *run) mcpServers() {
	r.s.mu.Lock()
	names := make([]string, 0, len(r.s.mcp))
	for _, m := range r.s.mcp {
		names = append(names, mcpName(m))
	}
	r.s.mu.Unlock()
	if len(names) == 0 {
		r.say("mcp servers: none")
		return
	}
	r.say("mcp servers: " + strings.Join(names, ", "))
}

func mcpName(m acpsdk.McpServer) string {
	switch {
	case m.Stdio != nil:
		return m.Stdio.Name
	case m.Http != nil:
		return m.Http.Name
	case m.Sse != nil:
		return m.Sse.Name
	}
	return ""
}

// mcpCall runs "mcp SERVER TOOL [JSON]".
func (r *run) mcpCall(arg string) {
	server, rest, _ := strings.Cut(strings.TrimSpace(arg), " ")
	tool, args, _ := strings.Cut(strings.TrimSpace(rest), " ")
	text, err := r.callMCP(server, tool, strings.TrimSpace(args))
	if err != nil {
		r.say(fmt.Sprintf("%s/%s failed: %s", server, tool, err))
		return
	}
	r.say(fmt.Sprintf("%s/%s: %s", server, tool, text))
}

func (r *run) callMCP(server, tool, args string) (string, error) {
	r.s.mu.Lock()
	i := slices.IndexFunc(r.s.mcp, func(m acpsdk.McpServer) bool { return mcpName(m) == server })
	var m acpsdk.McpServer
	if i >= 0 {
		m = r.s.mcp[i]
	}
	r.s.mu.Unlock()
	if i < 0 {
		return "", fmt.Errorf("no MCP server %q in this session", server)
	}
	var t mcp.Transport
	switch {
	case m.Stdio != nil:
		cmd := exec.Command(m.Stdio.Command, m.Stdio.Args...)
		cmd.Env = os.Environ()
		for _, e := range m.Stdio.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
		t = &mcp.CommandTransport{Command: cmd}
	case m.Http != nil:
		t = &mcp.StreamableClientTransport{Endpoint: m.Http.Url, HTTPClient: headerClient(m.Http.Headers), DisableStandaloneSSE: true}
	default:
		return "", errors.New("unsupported MCP transport")
	}
	var params map[string]any
	if args != "" {
		if err := json.Unmarshal([]byte(args), &params); err != nil {
			return "", fmt.Errorf("arguments: %w", err)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: Name, Version: Version}, nil)
	cs, err := c.Connect(r.ctx, t, nil)
	if err != nil {
		return "", err
	}
	defer cs.Close()
	res, err := cs.CallTool(r.ctx, &mcp.CallToolParams{Name: tool, Arguments: params})
	if err != nil {
		return "", err
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	if res.IsError {
		return "", errors.New(strings.Join(parts, " "))
	}
	return strings.Join(parts, " "), nil
}

// headerClient is an HTTP client that sends the server's headers.
func headerClient(headers []acpsdk.HttpHeader) *http.Client {
	return &http.Client{Transport: headerTransport(headers)}
}

type headerTransport []acpsdk.HttpHeader

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for _, kv := range h {
		req.Header.Set(kv.Name, kv.Value)
	}
	return http.DefaultTransport.RoundTrip(req)
}
