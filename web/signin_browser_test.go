package web_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/web"
	"github.com/ahp-go/ahp/workspace"
)

func TestMain(m *testing.M) {
	acptest.ServeIfAsked()
	os.Exit(m.Run())
}

// signInAgent is the test ACP agent as provider name: it needs the key
// "sk-web-7" or its login (a terminal method writing marker).
func signInAgent(t *testing.T, name, marker string) *acp.Backend {
	cfg := acp.Config{Name: name, Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{
		acptest.AgentEnv: "1", acptest.AuthMethodsEnv: "key", acptest.RequireKeyEnv: "sk-web-7", acptest.LoginFileEnv: marker,
	}}
	b, err := acp.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Probe(t.Context()); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBrowserSignIn: the new-session dialog shows each agent's state; an
// agent that needs sign-in offers a key field and a login button; a wrong
// key is refused, the right one makes it ready; the login runs in a
// terminal in the dialog, and when it ends the agent is ready.
func TestBrowserSignIn(t *testing.T) {
	for _, v := range []view{views[0], views[3]} {
		t.Run(v.name, func(t *testing.T) { browseSignIn(t, v) })
	}
}

func browseSignIn(t *testing.T, v view) {
	marker := filepath.Join(t.TempDir(), "marker")
	h, err := host.New(&host.Options{
		Agents: []agent.Backend{echo.New(&echo.Options{WordDelay: -1}),
			signInAgent(t, "keyed", filepath.Join(t.TempDir(), "never")), signInAgent(t, "login", marker)},
		Workspace: workspace.New(&workspace.Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(h.WebSocketHandler(nil)))
	t.Cleanup(func() { srv.Close(); h.Close() })

	b := newBrowser(t, v.width, v.height)
	if v.dark {
		b.run("choosing the colour scheme", colorScheme("dark"))
	}
	if v.phone {
		b.run("emulating a phone", chromedp.EmulateViewport(v.width, v.height, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	} else {
		b.run("sizing the page", chromedp.EmulateViewport(v.width, v.height))
	}
	b.run("opening the page", chromedp.Navigate(srv.URL+"/"))
	b.wait("the connection", `document.body.dataset.conn === 'connected'`)
	b.run("opening the new-session form", chromedp.Click(chromedp.ID("#new-session")))
	b.wait("the agent list", `document.querySelector('#c-provider').options.length === 3`)
	states := eval[[]string](b, `[...document.querySelectorAll('#c-provider option')].map((o) => o.value + ':' + o.dataset.state + ':' + o.textContent)`)
	want := []string{"echo:ready:Echo", "keyed:needs sign-in:ACP test agent (keyed) — needs sign-in", "login:needs sign-in:ACP test agent (login) — needs sign-in"}
	if strings.Join(states, "|") != strings.Join(want, "|") {
		t.Errorf("agents listed as %q, want %q", states, want)
	}

	// A key.
	eval[bool](b, `{ const s = document.querySelector('#c-provider'); s.value = 'keyed'; s.dispatchEvent(new Event('change')); } true`)
	b.wait("the sign-in form", `!!document.querySelector('#c-about .sign-in-key') && !!document.querySelector('#c-about .sign-in-login')`)
	if about := eval[string](b, `document.querySelector('#c-about').textContent`); !strings.Contains(about, "Needs sign-in: Authentication required") {
		t.Errorf("the dialog says %q, want the state and its reason", about)
	}
	b.shot("sign-in")
	// Creating a session first is refused (AuthRequired) with a pointer
	// to the sign-in above; the dialog stays open.
	b.run("creating before sign-in", chromedp.Click(chromedp.ID("#create-submit")))
	b.wait("the sign-in refusal", `[...document.querySelectorAll('.toast')].some((e) => e.textContent.includes('keyed needs sign-in first')) && document.querySelector('#create-dialog').open`)
	b.run("typing a wrong key", chromedp.SendKeys(chromedp.CSS(`#c-about .sign-in-key`), "sk-wrong"), chromedp.Click(chromedp.CSS(`#c-about .sign-in-send`)))
	b.wait("the refusal", `[...document.querySelectorAll('.toast')].some((e) => e.textContent.includes('did not accept the key'))`)
	b.run("typing the key", chromedp.SendKeys(chromedp.CSS(`#c-about .sign-in-key`), "sk-web-7"), chromedp.Click(chromedp.CSS(`#c-about .sign-in-send`)))
	b.wait("the agent ready", `document.querySelector('#c-provider option[value=keyed]').dataset.state === 'ready' && document.querySelector('#c-about .agent-state').textContent === 'ready'`)
	b.shot("signed-in")

	// A login in a terminal.
	eval[bool](b, `{ const s = document.querySelector('#c-provider'); s.value = 'login'; s.dispatchEvent(new Event('change')); } true`)
	b.wait("the login button", `!!document.querySelector('#c-about .sign-in-login')`)
	b.run("signing in", chromedp.Click(chromedp.CSS(`#c-about .sign-in-login`)))
	b.wait("the login's end", `!document.querySelector('#c-login').hidden && document.querySelector('#c-login-state').textContent.startsWith('ended') && document.querySelector('#c-login-screen').textContent.includes('Signed in.')`)
	b.wait("the agent ready", `document.querySelector('#c-provider option[value=login]').dataset.state === 'ready'`)
	b.shot("login-done")
	// The login's terminal fits the dialog, on a phone too.
	if over := eval[bool](b, `(() => { const s = document.querySelector('#c-login-screen .xterm-screen'); return !s || s.getBoundingClientRect().right > document.querySelector('#c-login').getBoundingClientRect().right + 1; })()`); over {
		t.Errorf("the login terminal is wider than the dialog at %d px", v.width)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the login did not run: %v", err)
	}
	b.run("closing the login", chromedp.Click(chromedp.ID("#c-login-close")))
	b.wait("the login terminal gone", `document.querySelector('#c-login').hidden && !(window.ahpApp.client.state('ahp-root://').terminals || []).length`)
}
