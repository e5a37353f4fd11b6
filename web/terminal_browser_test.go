package web_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// quietShell keeps the terminals' shells from reading the user's
// ~/.bashrc, whose start-up work (a version manager's, say) has nothing to
// do with the page and can take long on a busy machine.
func quietShell(t *testing.T) {
	t.Setenv("AHPD_NO_BASHRC", "1")
}

// recordPolicyViolations makes every page the browser opens keep the
// Content-Security-Policy violations it meets in window.__csp.
func (b *browser) recordPolicyViolations() {
	b.t.Helper()
	b.run("recording policy violations", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.__csp = [];
			document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || e.sample)));`})
		return err
	}))
}

func (b *browser) checkNoPolicyViolations() {
	b.t.Helper()
	if v := eval[[]string](b, `window.__csp || []`); len(v) > 0 {
		b.t.Errorf("the page broke its Content-Security-Policy: %v", v)
	}
}

// typeKeys types s into the focused element the way a browser does for
// a person: for each key a keyDown that carries the key's text (so a page
// that handles the keydown itself suppresses the keypress, as xterm.js
// does), then a keyUp. chromedp's SendKeys sends a separate char event,
// which xterm.js would take as a second press.
func typeKeys(sel, s string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Focus(chromedp.CSS(sel)), chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, r := range s {
			var down, up *input.DispatchKeyEventParams
			text := ""
			for _, k := range kb.Encode(r) {
				switch k.Type {
				case kb.KeyDown:
					down = k
				case kb.KeyUp:
					up = k
				case kb.KeyChar:
					text = k.Text
				}
			}
			if down == nil || up == nil {
				return fmt.Errorf("no key for %q", r)
			}
			if r == '\r' || r == '\n' {
				text = "\r"
			}
			down.Text, down.UnmodifiedText = text, text
			for _, k := range []*input.DispatchKeyEventParams{down, up} {
				if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, *k); err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// terminalLine is a JavaScript expression: whether a row of the terminal
// on screen reads exactly s.
func terminalLine(s string) string {
	return `[...document.querySelectorAll('#term-screen .xterm-rows > div')].some((r) => r.textContent.trim() === ` + jsString(s) + `)`
}

func jsString(s string) string {
	b, _ := protocol.Marshal(s)
	return string(b)
}

// outputLine matches a line of output that reads "hi".
var outputLine = regexp.MustCompile(`[\r\n]hi\r\n`)

// againLine matches the line of output typed after a reload.
var againLine = regexp.MustCompile(`[\r\n]again-15\r\n`)

// terminalState waits until a subscribed terminal satisfies ok.
func terminalState(t *testing.T, sub *client.Subscription, what string, ok func(*protocol.TerminalState) bool) *protocol.TerminalState {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := sub.Terminal()
		if st != nil && ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			b, _ := protocol.Marshal(st)
			t.Fatalf("the second client never saw %s; its terminal state: %.3000s", what, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBrowserTerminal opens a terminal in a session's directory from the
// page, types in xterm.js, and checks that the output shows there and,
// live, in a second client; that the second client's input shows in the
// page; that a reload shows the retained output; and that the exit and
// the disposal show.
func TestBrowserTerminal(t *testing.T) {
	quietShell(t)
	_, url := testHost(t)
	dir := t.TempDir()
	b := newBrowser(t, 1100, 760)
	b.recordPolicyViolations()
	b.sessionIn(url, dir, "a directory")
	b.wait("the session", `!!window.ahpApp.client.state(window.ahpApp.sessionURI)?.workingDirectories?.length`)

	// A new terminal starts in the session's directory, claimed by the page.
	b.run("opening the terminals", chromedp.Click(chromedp.ID("#term-tab")))
	b.wait("the terminal pane", `!document.querySelector('#terms').hidden && !document.querySelector('#term-empty').hidden`)
	b.run("starting a terminal", chromedp.Click(chromedp.ID("#term-new")))
	b.wait("the terminal", `!!window.ahpApp.terms.uri && !!document.querySelector('#term-screen .xterm-rows') &&
		document.querySelector('#term-state').textContent === 'running' && document.querySelectorAll('#term-list .tab').length === 1`)
	uri := eval[string](b, `window.ahpApp.terms.uri`)
	if got := eval[string](b, `document.querySelector('#term-claim').textContent`); got != "held by this page" {
		t.Errorf("the claim reads %q, want %q", got, "held by this page")
	}

	o, sub, ctx := otherOn(t, url, uri)
	st := terminalState(t, sub, "the terminal", func(*protocol.TerminalState) bool { return true })
	if st.Cwd == nil || !strings.HasSuffix(*st.Cwd, "/"+filepath.Base(dir)) {
		t.Errorf("the terminal started in %v, want the session's directory %s", st.Cwd, dir)
	}
	// The PTY takes the size of the element the page fitted xterm.js to.
	b.wait("the size sent to the host", `(() => { const s = window.ahpApp.client.state(window.ahpApp.terms.uri);
		const t = window.ahpApp.terms.emu.term; return s.cols === t.cols && s.rows === t.rows; })()`)
	cols := eval[int64](b, `window.ahpApp.terms.emu.term.cols`)
	rows := eval[int64](b, `window.ahpApp.terms.emu.term.rows`)
	terminalState(t, sub, "the page's size", func(st *protocol.TerminalState) bool {
		return st.Cols != nil && *st.Cols == cols && st.Rows != nil && *st.Rows == rows
	})
	t.Logf("the page fitted the terminal to %dx%d", cols, rows)

	// Typing in the page runs in the shell; the output shows in the page
	// and, live, in the second client. A person types once the prompt shows.
	terminalState(t, sub, "the shell's prompt", func(st *protocol.TerminalState) bool {
		return strings.Contains(reducer.TerminalOutput(st), "# ") || strings.Contains(reducer.TerminalOutput(st), "$ ")
	})
	b.run("typing", typeKeys("#term-screen .xterm-helper-textarea", "echo hi\r"))
	b.wait("the output in the page", terminalLine("hi"))
	terminalState(t, sub, "the output", func(st *protocol.TerminalState) bool { return outputLine.MatchString(reducer.TerminalOutput(st)) })
	b.shot("terminal-output")

	// The second client's input shows in the page.
	if _, err := sub.Dispatch(ctx, &protocol.TerminalInputAction{Data: "echo from-$((6*7))\r"}); err != nil {
		t.Fatal(err)
	}
	b.wait("the second client's command", terminalLine("from-42"))

	// Output past what the page keeps drops its oldest part: about 2 MB of
	// numbers leave at most 1.25 MiB in the page's copy, ending in the last.
	if _, err := sub.Dispatch(ctx, &protocol.TerminalInputAction{Data: "seq 1 300000\r"}); err != nil {
		t.Fatal(err)
	}
	b.waitEvery("the last number", 200*time.Millisecond, terminalLine("300000"))
	kept := eval[int](b, `window.ahpApp.client.state(window.ahpApp.terms.uri).content.map((p) => p.type === 'command' ? p.output : p.value).join('').length`)
	t.Logf("after about 2 MB of output the page keeps %d characters of it", kept)
	if kept > 1<<20+1<<18 || kept < 1<<19 {
		t.Errorf("the page keeps %d characters of output, want between 512 KiB and 1.25 MiB", kept)
	}

	// A reload shows the output the host retained, and the page is still
	// the client that claimed the terminal: it resumed with reconnect, the
	// terminal is still its own, and what it types runs in the shell.
	clientID := eval[string](b, `window.ahpApp.client.clientId`)
	b.run("reloading", chromedp.Reload())
	b.wait("the connection after reload", `document.body.dataset.conn === 'connected' && !!window.ahpApp.sessionURI`)
	if got := eval[string](b, `window.ahpApp.client.clientId`); got != clientID {
		t.Errorf("after a reload the page is client %q, want %q", got, clientID)
	}
	resumed := eval[map[string]any](b, `window.ahpApp.client.lastResume || {}`)
	if resumed["reloaded"] != true {
		t.Errorf("the reloaded page did not resume with reconnect: %v", resumed)
	}
	t.Logf("the reloaded page resumed: %v", resumed)
	b.run("opening the terminals", chromedp.Click(chromedp.ID("#term-tab")))
	b.wait("the terminal in the list", `document.querySelectorAll('#term-list .tab').length === 1`)
	b.run("choosing it", chromedp.Click(chromedp.CSS("#term-list .tab")))
	b.wait("the retained output", terminalLine("300000"))
	if got := eval[string](b, `document.querySelector('#term-claim').textContent`); got != "held by this page" {
		t.Errorf("after a reload the claim reads %q, want %q", got, "held by this page")
	}
	b.run("typing after the reload", typeKeys("#term-screen .xterm-helper-textarea", "echo again-$((3*5))\r"))
	b.wait("the output after the reload", terminalLine("again-15"))
	terminalState(t, sub, "the output after the reload", func(st *protocol.TerminalState) bool {
		return againLine.MatchString(reducer.TerminalOutput(st))
	})
	b.shot("terminal-reloaded")

	// Another tab of the same page is a client of its own, although a
	// window a page opens starts with a copy of the page's sessionStorage.
	eval[bool](b, `(window.second = window.open(location.href), true)`)
	b.wait("the second tab's connection", `!!window.second && window.second.document.body?.dataset.conn === 'connected'`)
	if other := eval[string](b, `window.second.ahpApp.client.clientId`); other == clientID || other == "" {
		t.Errorf("the second tab is client %q, the first %q: want two clients", other, clientID)
	}
	eval[bool](b, `(window.second.close(), true)`)

	// The shell exits: the page shows it and stops taking input.
	b.run("exiting", typeKeys("#term-screen .xterm-helper-textarea", "exit 3\r"))
	b.wait("the exit", `document.querySelector('#term-state').textContent === 'exited (code 3)' && window.ahpApp.terms.emu.term.options.disableStdin`)
	terminalState(t, sub, "the exit", func(st *protocol.TerminalState) bool {
		ex, ok := st.Lifecycle.(*protocol.TerminalExitedLifecycleState)
		return ok && ex.ExitCode != nil && *ex.ExitCode == 3
	})
	b.shot("terminal-exited")

	// Closing it disposes of it on the host.
	b.run("closing the terminal", chromedp.Click(chromedp.ID("#term-dispose")))
	b.wait("the terminal gone", `document.querySelectorAll('#term-list .tab').length === 0 && !window.ahpApp.terms.uri &&
		(window.ahpApp.client.state('ahp-root://').terminals || []).length === 0 && !document.querySelector('#term-empty').hidden`)

	// A terminal an agent's session holds shows whose it is; taking it over
	// makes it the page's, which then sizes it.
	sessionURI := eval[string](b, `window.ahpApp.sessionURI`)
	chatURI := eval[string](b, `window.ahpApp.chatURI`)
	agentTerm := "ahp-terminal:/" + client.NewID()
	if err := o.c.CreateTerminal(ctx, &protocol.CreateTerminalParams{
		Channel: agentTerm, Name: protocol.Ptr("agent shell"), Cols: protocol.Ptr[int64](33), Rows: protocol.Ptr[int64](7),
		Claim: &protocol.TerminalSessionClaim{Session: sessionURI, Chat: protocol.Ptr(chatURI)},
	}); err != nil {
		t.Fatal(err)
	}
	b.wait("the agent's terminal in the list", `document.querySelectorAll('#term-list .tab').length === 1`)
	b.run("choosing it", chromedp.Click(chromedp.CSS("#term-list .tab")))
	b.wait("its claim", `document.querySelector('#term-claim').textContent === 'held by New Session' && !document.querySelector('#term-take').hidden &&
		window.ahpApp.terms.emu.term.cols === 33 && window.ahpApp.terms.emu.term.rows === 7`)
	b.shot("terminal-session-claim")
	b.run("taking it over", chromedp.Click(chromedp.ID("#term-take")))
	b.wait("the page's claim and size", `document.querySelector('#term-claim').textContent === 'held by this page' && document.querySelector('#term-take').hidden &&
		window.ahpApp.client.state(window.ahpApp.terms.uri).cols === window.ahpApp.terms.emu.term.cols && window.ahpApp.terms.emu.term.cols !== 33`)
	if err := o.c.DisposeTerminal(ctx, &protocol.DisposeTerminalParams{Channel: agentTerm}); err != nil {
		t.Fatal(err)
	}
	b.wait("the terminal closed by the other client", `document.querySelectorAll('#term-list .tab').length === 0 && !window.ahpApp.terms.uri`)
	b.checkNoPolicyViolations()
}
