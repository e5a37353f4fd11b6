package web_test

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/web"
	"github.com/ahp-go/ahp/workspace"
)

// mcpAgent is the test ACP agent as provider "tools", with three MCP
// servers in its configuration: "files" (stdio, the test binary serving
// MCP), "legacy" (SSE, which the agent cannot take) and "spare" (stdio,
// off until a client turns it on).
func mcpAgent(t *testing.T) *acp.Backend {
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
	return b
}

// TestBrowserMCP: the session view lists the session's MCP servers with
// their transport and state; turning one off stops it on the host, and
// turning the disabled one on starts it. At phone width the row wraps
// within the screen.
func TestBrowserMCP(t *testing.T) {
	for _, v := range []view{views[0], views[2]} {
		t.Run(v.name, func(t *testing.T) { browseMCP(t, v) })
	}
}

func browseMCP(t *testing.T, v view) {
	h, err := host.New(&host.Options{
		Agents:    []agent.Backend{echo.New(&echo.Options{WordDelay: -1}), mcpAgent(t)},
		Workspace: workspace.New(&workspace.Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(h.WebSocketHandler(nil)))
	t.Cleanup(func() { srv.Close(); h.Close() })

	b := newBrowser(t, v.width, v.height)
	if v.phone {
		b.run("emulating a phone", chromedp.EmulateViewport(v.width, v.height, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	}
	b.run("opening the page", chromedp.Navigate(srv.URL+"/"))
	b.wait("the connection", `document.body.dataset.conn === 'connected'`)
	b.run("opening the new-session form", chromedp.Click(chromedp.ID("#new-session")))
	b.wait("the agent list", `!!document.querySelector('#c-provider option[value=tools]')`)
	eval[bool](b, `{ const s = document.querySelector('#c-provider'); s.value = 'tools'; s.dispatchEvent(new Event('change')); } true`)
	b.run("creating a session", chromedp.SendKeys(chromedp.ID("#c-dir"), t.TempDir()), chromedp.Click(chromedp.ID("#create-submit")))
	b.wait("the session", `!!window.ahpApp.sessionURI && !!window.ahpApp.client.state(window.ahpApp.sessionURI)`)

	const servers = `[...document.querySelectorAll('#mcp-list .mcp-server')].map((e) => e.dataset.id + ':' + e.querySelector('input').checked + ':' + e.querySelector('.tag').textContent)`
	b.wait("the MCP servers", `!document.querySelector('#mcp').hidden && JSON.stringify(`+servers+`) === JSON.stringify(['mcp-files:true:ready', 'mcp-legacy:true:error', 'mcp-spare:false:stopped'])`)
	if got := eval[string](b, `document.querySelector('#mcp-list [data-id=mcp-legacy]').title`); !strings.HasPrefix(got, "sse · error · ") {
		t.Errorf("the SSE server's title is %q, want its transport, state and error", got)
	}
	if over := eval[bool](b, `document.querySelector('#mcp').scrollWidth > document.querySelector('#mcp').clientWidth + 1`); over {
		t.Errorf("the MCP row is wider than the screen at %d px", v.width)
	}
	b.shot("mcp-servers")

	sessionURI := eval[string](b, `window.ahpApp.sessionURI`)
	_, sub, _ := otherOn(t, srv.URL, sessionURI)
	hostStates := func(what string, ok func(map[string]string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := map[string]string{}
			if st := sub.Session(); st != nil {
				for _, c := range st.Customizations {
					if m, ok := c.(*protocol.MCPServerCustomization); ok && m.State != nil {
						got[m.Name] = m.State.Kind()
					}
				}
			}
			if ok(got) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the host never showed %s: its MCP servers are %v", what, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// Off: stopped on the host, and so in the page.
	b.run("turning files off", chromedp.Click(chromedp.CSS(`#mcp-list [data-id=mcp-files] input`)))
	hostStates("files stopped", func(m map[string]string) bool { return m["files"] == "stopped" })
	b.wait("files stopped", `(() => { const e = document.querySelector('#mcp-list [data-id=mcp-files]'); return !e.querySelector('input').checked && e.querySelector('.tag').textContent === 'stopped'; })()`)

	// On: the disabled server starts.
	b.run("turning spare on", chromedp.Click(chromedp.CSS(`#mcp-list [data-id=mcp-spare] input`)))
	// It starts with the next prompt; until then it is starting.
	hostStates("spare on", func(m map[string]string) bool {
		return m["files"] == "stopped" && (m["spare"] == "starting" || m["spare"] == "ready")
	})
	b.wait("spare on", `(() => { const e = document.querySelector('#mcp-list [data-id=mcp-spare]'); return e.querySelector('input').checked && e.querySelector('.tag').textContent !== 'stopped'; })()`)
	b.shot("mcp-toggled")
}
