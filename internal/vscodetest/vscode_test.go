package vscodetest

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestVSCode drives real VS Code (code-server's web build in headless
// Chromium) against ahpd: VS Code's server reaches the host through its
// agent host bridge, with the host's token. See docs/vscode-e2e.md.
func TestVSCode(t *testing.T) {
	node, entry := install(t)
	ahp := buildAHP(t)
	token := newToken(t)
	a := startHost(t, token)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The token path: ahpd refuses a client without the token (VS Code,
	// given it, connects below).
	if out, err := a.cli(ctx, ahp, "", "sessions"); err == nil {
		t.Fatalf("ahp sessions without the token succeeded: %s", out)
	}
	bridge := a.addr
	if os.Getenv("AHP_VSCODE_FRAMES") == "1" {
		bridge = startRelay(t, a.addr).addr
	}
	cs := startCodeServer(t, node, entry, bridge, token)
	b := newBrowser(t)
	b.run("opening VS Code", chromedp.Navigate(cs.workbenchURL()))
	b.wait("the workbench", jsExists(selWorkbench))
	b.wait("the session target picker", jsExists(selTargetPicker))
	b.shot("workbench")

	// Pick ahpd's echo agent as the chat's session target. VS Code lists
	// the host's agents once its chat has started, a while after the
	// workbench shows, and the picker lists what it knew when it opened.
	b.retry("the echo agent among the targets", 90*time.Second, func() bool {
		b.run("opening the session target picker", chromedp.Click(chromedp.CSS(selTargetPicker)))
		if b.poll(jsExists(selTargetEcho), 3*time.Second) {
			return true
		}
		b.run("closing the picker", chromedp.KeyEvent(kb.Escape))
		return false
	})
	b.shot("target picker")
	b.run("picking the echo agent", chromedp.Click(chromedp.CSS(selTargetEcho)))
	b.wait("the chat input on the echo agent", jsExists(selInputOnEcho))

	// A prompt and its streamed reply.
	b.send("hello from VS Code")
	b.wait("the echoed reply", jsText(selResponse, "You said: hello from VS Code"))
	b.shot("reply")

	// A tool call confirmed in VS Code's UI.
	b.send("/tool ping")
	b.wait("the tool confirmation", jsVisible(selConfirmAllow))
	b.shot("tool confirmation")
	b.run("allowing the tool", chromedp.Click(chromedp.JSPath(jsFirstVisible(selConfirmAllow))))
	b.wait("the tool's result", jsText(selResponse, "The tool said: ping"))
	b.shot("tool done")

	// The session VS Code created is in ahp sessions, with its provider,
	// under the URI VS Code named it by (<provider>:/<uuid>).
	vsSession := sessionTitled(t, a.cliJSON(ctx, t, ahp, "sessions"), "hello from VS Code")
	if r, _ := vsSession["resource"].(string); vsSession["provider"] != "echo" || !strings.HasPrefix(r, "echo:/") {
		t.Errorf("VS Code's session in ahp sessions: %v, want provider echo and a URI echo:/<id>", vsSession)
	}

	// A session created with ahp shows in VS Code's Sessions view, and
	// VS Code opens it with its turn.
	made := a.cliJSON(ctx, t, ahp, "new", "--provider", "echo", "--cwd", cs.folder)
	if len(made) != 1 {
		t.Fatalf("ahp new printed %v", made)
	}
	// ahpd names it as VS Code does, so that VS Code sees its provider.
	cliSession, _ := made[0]["session"].(string)
	if !strings.HasPrefix(cliSession, "echo:/") {
		t.Errorf("ahp new made %q, want echo:/<id>", cliSession)
	}
	if _, err := a.cli(ctx, ahp, a.token, "send", cliSession, "hello from the ahp CLI"); err != nil {
		t.Fatal(err)
	}
	b.run("showing the Sessions view", chromedp.Click(chromedp.JSPath(jsFirstVisible(selShowSessions))))
	b.wait("the ahp session in the Sessions view", jsExists(selSessionRow("hello from the ahp CLI")))
	b.wait("VS Code's session in the Sessions view", jsExists(selSessionRow("hello from VS Code")))
	b.shot("sessions")
	b.run("opening the ahp session", chromedp.Click(chromedp.CSS(selSessionRow("hello from the ahp CLI"))))
	b.wait("the ahp session's reply", jsText(selResponse, "You said: hello from the ahp CLI"))
	b.shot("ahp session opened")
}

// TestVSCodeWrongToken gives VS Code a token other than the host's: ahpd
// refuses its bridge, and VS Code offers none of the host's agents.
func TestVSCodeWrongToken(t *testing.T) {
	node, entry := install(t)
	a := startHost(t, newToken(t))
	cs := startCodeServer(t, node, entry, a.addr, newToken(t))
	b := newBrowser(t)
	b.run("opening VS Code", chromedp.Navigate(cs.workbenchURL()))
	b.wait("the workbench", jsExists(selWorkbench))
	b.wait("the session target picker", jsExists(selTargetPicker))
	deadline := time.Now().Add(90 * time.Second)
	for a.refused.Load() == 0 {
		if time.Now().After(deadline) {
			b.failed("ahpd refusing VS Code")
			t.Fatalf("VS Code's bridge never reached ahpd with the wrong token; code-server said:\n%s", cs.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.run("opening the session target picker", chromedp.Click(chromedp.CSS(selTargetPicker)))
	b.wait("the targets", jsExists(selTargetLocal))
	b.shot("targets without the host")
	if b.poll(jsExists(selTargetEcho), 2*time.Second) {
		t.Fatal("VS Code offers the echo agent although ahpd refused its token")
	}
}

// sessionTitled returns the one session of ahp sessions with the title,
// failing the test when there is not exactly one.
func sessionTitled(t *testing.T, list []map[string]any, title string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, s := range list {
		if s["title"] == title {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one session titled %q in ahp sessions, got %d: %v", title, len(found), list)
	}
	return found[0]
}

// jsExists is a JavaScript condition: an element matches the selector.
func jsExists(sel string) string {
	return `!!document.querySelector(` + jsString(sel) + `)`
}

// jsText is a JavaScript condition: an element matching the selector
// contains the text.
func jsText(sel, text string) string {
	return `[...document.querySelectorAll(` + jsString(sel) + `)].some(e => e.innerText.includes(` + jsString(text) + `))`
}

// send types a prompt into the chat input and sends it.
func (b *browser) send(prompt string) {
	b.t.Helper()
	// VS Code can re-render the chat input just after a target is picked,
	// dropping what was typed into the old one: type again into an
	// emptied input until the send button says the prompt is there.
	b.retry("the send button", 90*time.Second, func() bool {
		b.run("typing "+prompt, chromedp.Click(chromedp.CSS(selChatInput)), chromedp.KeyEvent(prompt))
		if b.poll(jsExists(selSendEnabled), 5*time.Second) {
			return true
		}
		b.run("emptying the input", chromedp.Click(chromedp.CSS(selChatInput)),
			chromedp.KeyEvent("a", chromedp.KeyModifiers(kb.ModifierCtrl)), chromedp.KeyEvent(kb.Backspace))
		return false
	})
	b.shot("typed " + prompt)
	b.run("sending "+prompt, chromedp.Click(chromedp.CSS(selSendEnabled)))
}

// jsVisible is a JavaScript condition: a visible element matches the
// selector.
func jsVisible(sel string) string {
	return `!!(` + jsFirstVisible(sel) + `)`
}

// jsFirstVisible is a JavaScript expression for the first visible element
// that matches the selector (VS Code keeps hidden copies of some widgets).
func jsFirstVisible(sel string) string {
	return `[...document.querySelectorAll(` + jsString(sel) + `)].find(e => e.offsetParent !== null)`
}

// cliJSON runs the ahp command line with the host's token and returns the
// JSON objects it printed, one a line.
func (a *ahpd) cliJSON(ctx context.Context, t *testing.T, bin string, args ...string) []map[string]any {
	t.Helper()
	out, err := a.cli(ctx, bin, a.token, args...)
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	for line := range strings.Lines(out) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("ahp %s printed %q: %v", strings.Join(args, " "), line, err)
		}
		objs = append(objs, m)
	}
	return objs
}
