package main

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace"
)

// newMCPHarness serves a host with the test ACP agent as provider
// "tools", configured with the MCP servers "files" (stdio, the test binary
// serving MCP), "legacy" (SSE, which the agent cannot take) and "spare"
// (stdio, off until a client turns it on).
func newMCPHarness(t *testing.T) *harness {
	mcpServer := map[string]string{acptest.MCPServerEnv: "1"}
	cfg := acp.Config{Name: "tools", Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{acptest.AgentEnv: "1"},
		MCPServers: []acp.MCPServer{
			{Name: "files", Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: mcpServer},
			{Name: "legacy", Type: acp.MCPSSE, URL: "http://127.0.0.1:1/sse"},
			{Name: "spare", Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: mcpServer, Disabled: true},
		}}
	b, err := acp.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(&host.Options{Agents: []agent.Backend{b}, Workspace: workspace.New(&workspace.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.WebSocketHandler(nil))
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return &harness{t: t, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

// mcpUntil runs `ahp mcp SESSION` until its output holds want.
func mcpUntil(t *testing.T, h *harness, id, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := h.cmd("", "mcp", id).run(t)
		if r.code == exitOK && strings.Contains(r.stdout, want) {
			return r.stdout
		}
		if time.Now().After(deadline) {
			t.Fatalf("ahp mcp never printed %q: exit %d, stdout %q, stderr %q", want, r.code, r.stdout, r.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMCP: `ahp mcp SESSION` lists the session's MCP servers with their
// transport, choice and state; `ahp mcp off` and `on` turn one off and on
// for the session; mistakes are usage errors.
func TestMCP(t *testing.T) {
	h := newMCPHarness(t)
	r := h.cmd("", "new", "--provider", "tools", "--cwd", t.TempDir()).run(t)
	if r.code != exitOK {
		t.Fatalf("ahp new: exit %d, %s", r.code, r.stderr)
	}
	id := strings.TrimSpace(r.stdout)

	out := mcpUntil(t, h, id, "files   stdio  on   ready")
	for _, want := range []string{"legacy  sse    on   error: the agent does not take SSE MCP servers", "spare   stdio  off  stopped"} {
		if !strings.Contains(out, want) {
			t.Errorf("ahp mcp: %q lacks %q", out, want)
		}
	}

	j := h.cmd("", "--json", "mcp", id).run(t)
	var got []mcpServer
	for line := range strings.Lines(j.stdout) {
		var m mcpServer
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("ahp --json mcp printed %q: %v", line, err)
		}
		got = append(got, m)
	}
	want := []mcpServer{
		{Name: "files", ID: "mcp-files", Transport: "stdio", State: "ready", Enabled: true},
		{Name: "legacy", ID: "mcp-legacy", Transport: "sse", State: "error", Enabled: true},
		{Name: "spare", ID: "mcp-spare", Transport: "stdio", State: "stopped", Enabled: false},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(mcpServer{}), cmpopts.IgnoreFields(mcpServer{}, "Error")); diff != "" {
		t.Errorf("ahp --json mcp (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stderr, or in the listing after
	}{
		{"turning one off", []string{"mcp", "off", id, "files"}, exitOK, "turned files off in " + id},
		{"which shows", nil, exitOK, "files   stdio  off  stopped"},
		{"turning a disabled one on", []string{"mcp", "on", id, "spare"}, exitOK, "turned spare on"},
		{"which starts", nil, exitOK, "spare   stdio  on   starting"},
		{"an unknown server", []string{"mcp", "on", id, "nope"}, exitUsage, `no MCP server "nope" (the session has files, legacy, spare)`},
		{"no name", []string{"mcp", "off", id}, exitUsage, "usage: ahp mcp off SESSION NAME"},
		{"too many words", []string{"mcp", id, "files"}, exitUsage, "usage: ahp mcp SESSION"},
		{"an unknown session", []string{"mcp", "ahp-session:/nope"}, exitNotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.args == nil {
				mcpUntil(t, h, id, tc.out)
				return
			}
			r := h.cmd("", tc.args...).run(t)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.out) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.out)
			}
		})
	}
}

// TestMCPServersOf: servers at the top level and inside plugins, the
// effective choice from the first decision, and the toggle's decisions.
func TestMCPServersOf(t *testing.T) {
	off := false
	ready := &protocol.MCPServerCustomization{ID: "mcp-a", Name: "a", State: &protocol.MCPServerReadyState{}}
	global := &protocol.MCPServerCustomization{ID: "mcp-b", Name: "b", State: &protocol.MCPServerStoppedState{},
		Enablement: []protocol.CustomizationEnablement{&protocol.CustomizationEnablementGlobal{Enabled: false}}}
	old := &protocol.MCPServerCustomization{ID: "p-c", Name: "c", Enabled: &off, State: &protocol.MCPServerAuthRequiredState{}}
	list := []protocol.Customization{ready, &protocol.PluginCustomization{ID: "p", Name: "p", Children: []protocol.ChildCustomization{
		&protocol.SkillCustomization{ID: "s", Name: "s"}, old}}, global}
	var got []string
	for _, m := range mcpServersOf(list) {
		got = append(got, m.ID+":"+m.State+":"+map[bool]string{true: "on", false: "off"}[m.Enabled]+":"+mcpStateText(m))
	}
	if diff := cmp.Diff([]string{"mcp-a:ready:on:ready", "p-c:authRequired:off:needs sign-in", "mcp-b:stopped:off:stopped"}, got); diff != "" {
		t.Errorf("mcpServersOf (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		cz   *protocol.MCPServerCustomization
		on   bool
		want []protocol.CustomizationEnablement
	}{
		{"no decisions", ready, false, []protocol.CustomizationEnablement{&protocol.CustomizationEnablementSession{Enabled: false}}},
		{"a global decision is kept after", global, true, []protocol.CustomizationEnablement{
			&protocol.CustomizationEnablementSession{Enabled: true}, &protocol.CustomizationEnablementGlobal{Enabled: false}}},
		{"the session decision is replaced", &protocol.MCPServerCustomization{ID: "x", Enablement: []protocol.CustomizationEnablement{
			&protocol.CustomizationEnablementSession{Enabled: false}, &protocol.CustomizationEnablementGlobal{Enabled: true}}}, true,
			[]protocol.CustomizationEnablement{&protocol.CustomizationEnablementSession{Enabled: true}, &protocol.CustomizationEnablementGlobal{Enabled: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := mcpToggle(tc.cz, tc.on)
			if a.ID != tc.cz.ID {
				t.Errorf("the toggle names %q, want %q", a.ID, tc.cz.ID)
			}
			if diff := cmp.Diff(tc.want, a.Enablement); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}
