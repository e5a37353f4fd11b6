package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/web"
	"github.com/ahp-go/ahp/workspace"
)

// colorScheme emulates the user's light or dark preference.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return chromedp.Void{}, err
	}
}

// view is one size and colour scheme the views are shown in.
type view struct {
	name          string
	width, height int64
	phone, dark   bool
}

var views = []view{
	{"desktop-light", 1400, 900, false, false},
	{"desktop-dark", 1400, 900, false, true},
	{"phone-light", 390, 844, true, false},
	{"phone-dark", 390, 844, true, true},
}

// TestBrowserViews goes through every view of the page at desktop and
// phone sizes, light and dark, with a screenshot of each, and checks in
// the DOM what users found wrong: the header's status dot, markdown in
// titles, errors and questions shown twice, unlabelled tool output, the
// page title, the phone's tab row and composer, Resume on resumable
// errors, elapsed time, Esc, agent descriptions, and the shared draft.
func TestBrowserViews(t *testing.T) {
	for _, v := range views {
		t.Run(v.name, func(t *testing.T) { browseViews(t, v) })
	}
}

// hostWithRoot runs testHost's host with root as a directory clients may
// browse (as ahpd --root does), for the directory picker.
func hostWithRoot(t *testing.T, root string) string {
	h, err := host.New(&host.Options{
		Agents:    []agent.Backend{echo.New(&echo.Options{WordDelay: -1})},
		Workspace: workspace.New(&workspace.Options{Roots: []string{root}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(h.WebSocketHandler(nil)))
	t.Cleanup(func() { srv.Close(); h.Close() })
	return srv.URL
}

func browseViews(t *testing.T, v view) {
	base := t.TempDir()
	url := hostWithRoot(t, base)
	b := newBrowser(t, v.width, v.height)
	scheme := "light"
	if v.dark {
		scheme = "dark"
	}
	b.run("choosing the colour scheme", colorScheme(scheme))
	if v.phone {
		b.run("emulating a phone", chromedp.EmulateViewport(v.width, v.height, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	} else {
		b.run("sizing the page", chromedp.EmulateViewport(v.width, v.height))
	}
	b.run("opening the page", chromedp.Navigate(url+"/"))
	b.wait("the connection", `document.body.dataset.conn === 'connected'`)
	if got := eval[string](b, `document.title`); got != "ahpd" {
		t.Errorf("page title with no session open: %q, want ahpd", got)
	}
	b.shot("sessions-empty")

	// The new-session dialog describes the agent.
	b.run("opening the new-session form", chromedp.Click(chromedp.ID("#new-session")))
	b.wait("the agent list", `document.querySelector('#c-provider').options.length > 0`)
	if about := eval[string](b, `document.querySelector('#c-about').textContent`); !strings.Contains(about, "streams your prompt back") {
		t.Errorf("the new-session dialog says %q about the echo agent, want its description", about)
	}
	// The directory: browsed on the host, folder by folder.
	dir := filepath.Join(base, "proj")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b.run("browsing for the folder", chromedp.SendKeys(chromedp.ID("#c-dir"), base), chromedp.Click(chromedp.ID("#c-browse")))
	b.wait("the folders", `[...document.querySelectorAll('#c-dirs button')].some((e) => e.textContent === 'proj')`)
	b.shot("new-session")
	eval[bool](b, `[...document.querySelectorAll('#c-dirs button')].find((e) => e.textContent === 'proj').click(); true`)
	b.wait("the folder chosen", fmt.Sprintf(`document.querySelector('#c-dir').value === %q`, dir))
	b.run("creating a session", chromedp.Click(chromedp.ID("#create-submit")))
	b.wait("the chat", `!!window.ahpApp.chatURI && !!window.ahpApp.client.state(window.ahpApp.chatURI)`)
	chatURI := eval[string](b, `window.ahpApp.chatURI`)

	// The composer: Enter sends on a keyboard; a phone sends with the button.
	placeholder := eval[string](b, `document.querySelector('#prompt').placeholder`)
	if v.phone == strings.Contains(placeholder, "Enter sends") {
		t.Errorf("composer placeholder %q on %s", placeholder, v.name)
	}

	// Typing / shows the agent's commands, in its own words.
	b.run("typing a slash", chromedp.SendKeys(chromedp.ID("#prompt"), "/"))
	b.wait("the command help", `!document.querySelector('#slash-help').hidden && document.querySelector('#slash-help').textContent.includes('/tool')`)
	b.shot("command-help")
	eval[bool](b, `const p = document.querySelector('#prompt'); p.value = ''; p.dispatchEvent(new Event('input')); true`)
	b.wait("the help gone", `document.querySelector('#slash-help').hidden`)

	// A first message with markdown: titles show it as plain text.
	b.sendPrompt("# Heading with **bold**")
	b.wait("the reply", lastTurn+`.includes('You said:') && !document.querySelector('#active article')`)
	b.wait("the title", `document.querySelector('#s-title').textContent !== 'New Session'`)
	titles := eval[[]string](b, `[document.querySelector('#s-title').textContent, document.querySelector('#sessions li .stitle').textContent, document.title]`)
	for _, got := range titles {
		if strings.ContainsAny(got, "#*") || !strings.Contains(got, "Heading with bold") {
			t.Errorf("titles %q, want plain text without markdown", titles)
			break
		}
	}
	// The header's dot says what the list's dot says.
	b.wait("the session idle in the list", `document.querySelector('#sessions li .dot')?.classList.contains('idle')`)
	if cls := eval[string](b, `document.querySelector('#s-status').className`); cls != "dot idle" {
		t.Errorf("the header's status dot is %q for an idle session, want dot idle", cls)
	}
	if v.phone {
		// Every tab of the session's tab row is on screen.
		clipped := eval[[]string](b, `[...document.querySelectorAll('.chat-tabs button')].filter((e) => { const r = e.getBoundingClientRect(); return r.left < 0 || r.right > innerWidth; }).map((e) => e.textContent)`)
		if len(clipped) > 0 {
			t.Errorf("tabs past the screen's edge at %d px: %q", v.width, clipped)
		}
		if w := eval[int](b, `document.documentElement.scrollWidth`); w > int(v.width) {
			t.Errorf("the page is %d px wide on a %d px screen", w, v.width)
		}
	}
	b.shot("chat")

	// A tool call: confirmation, then its input and output, labelled.
	b.sendPrompt("/tool ping")
	b.wait("the confirmation", `!!document.querySelector('#active .status-pending-confirmation .actions button.primary')`)
	b.shot("tool-confirmation")
	b.run("allowing the tool", chromedp.Click(chromedp.CSS(`#active .status-pending-confirmation .actions button.primary`)))
	b.wait("the tool result", lastTurn+`.includes('The tool said: ping')`)
	labels := eval[[]string](b, `[...document.querySelectorAll('#turns article:last-child .part.tool summary, #turns article:last-child .part.tool .tool-label')].map((e) => e.textContent)`)
	if strings.Join(labels, ",") != "Input,Output" {
		t.Errorf("the tool card's sections are labelled %q, want Input and Output", labels)
	}
	b.run("opening the tool's input", chromedp.Click(chromedp.CSS(`#turns article:last-child .part.tool summary`)))
	b.shot("tool-done")

	// An input request: its question once, and the page title says the
	// session needs the user.
	b.sendPrompt("/input Your name?")
	b.wait("the question", `!!document.querySelector('#active form.part.input input[type=text]')`)
	if n := eval[int](b, `document.querySelector('#active form.part.input').textContent.split('Your name?').length - 1`); n != 1 {
		t.Errorf("the question shows %d times, want once", n)
	}
	b.wait("the page title to say the session needs you", `document.title.startsWith('Needs you')`)
	b.shot("input-request")
	b.run("answering", chromedp.SendKeys(chromedp.CSS(`#active form.part.input input[type=text]`), "Ada"),
		chromedp.Click(chromedp.CSS(`#active form.part.input button[type=submit]`)))
	b.wait("the answer echoed", lastTurn+`.includes('You answered: Ada')`)
	b.wait("the page title back", `!document.title.startsWith('Needs you')`)

	// A failed turn shows its error once.
	b.sendPrompt("/error")
	b.wait("the error", lastTurn+`.includes('failed this turn on purpose') && !!document.querySelector('#turns article:last-child .turn-foot .tag.error')`)
	if n := eval[int](b, lastTurn+`.split('failed this turn on purpose').length - 1`); n != 1 {
		t.Errorf("the error's message shows %d times, want once", n)
	}
	b.shot("error")

	// A resumable error offers Resume, which finishes the turn.
	b.sendPrompt("/flaky the rest")
	b.wait("the Resume button", `!!document.querySelector('#turns article:last-child .turn-foot button.resume:not([hidden])')`)
	if cls := eval[string](b, `document.querySelector('#s-status').className`); cls != "dot error" {
		t.Errorf("the header's status dot is %q for a session whose turn failed, want dot error (as the list shows)", cls)
	}
	b.shot("resumable-error")
	b.run("resuming", chromedp.Click(chromedp.CSS(`#turns article:last-child .turn-foot button.resume`)))
	b.wait("the resumed turn", lastTurn+`.includes('Resumed: the rest') && !document.querySelector('#active article') && !document.querySelector('#turns button.resume:not([hidden])')`)

	// A running turn shows how long it has run; Esc cancels it.
	b.sendPrompt("/slow 400")
	b.wait("the elapsed time", `/^[0-9]+ s$/.test(document.querySelector('#active .turn-foot .elapsed')?.textContent || '') && document.querySelector('#active .turn-foot .elapsed').textContent !== '0 s'`)
	b.shot("running")
	b.run("pressing Esc", chromedp.KeyEvent(kb.Escape))
	b.wait("the cancelled turn", `!document.querySelector('#active article') && document.querySelector('#turns article:last-child').classList.contains('state-cancelled')`)

	// The shared draft: another client's edit shows in the composer, and
	// a send elsewhere clears it.
	o, sub, ctx := otherOn(t, url, chatURI)
	o.chat = sub
	if _, err := o.chat.Dispatch(ctx, &protocol.ChatDraftChangedAction{Draft: &protocol.Message{Text: "typed elsewhere", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}}); err != nil {
		t.Fatal(err)
	}
	b.wait("the other client's draft", `document.querySelector('#prompt').value === 'typed elsewhere'`)
	b.shot("shared-draft")
	if _, err := o.chat.Dispatch(ctx, &protocol.ChatDraftChangedAction{}); err != nil {
		t.Fatal(err)
	}
	b.wait("the draft cleared", `document.querySelector('#prompt').value === ''`)

	// Code blocks: highlighted, with a copy button; diffs: line numbers and
	// tinted lines. (The echo agent cannot answer with a code block, so the
	// page's own modules render one into the chat.)
	eval[bool](b, `Promise.all([import('/js/markdown.js'), import('/js/dom.js')]).then(([md, dom]) => {
		const el = document.createElement('article'); el.className = 'turn'; el.id = 'sample';
		const body = document.createElement('div'); body.className = 'md';
		body.innerHTML = md.render('Some code:\n\n`+"```"+`go\nfunc main() {\n\tfmt.Println("hi") // greet\n}\n`+"```"+`\n');
		md.enhanceCode(body);
		const b64 = (t) => btoa(t);
		const edit = window.ahpApp.renderEdit({ type: 'fileEdit',
			before: { uri: 'file:///w/a.txt', content: { uri: 'data:text/plain;charset=utf-8;base64,' + b64('one\ntwo\nthree\n') } },
			after: { uri: 'file:///w/a.txt', content: { uri: 'data:text/plain;charset=utf-8;base64,' + b64('one\nTWO\nthree\nfour\n') } },
			diff: { added: 2, removed: 1 } });
		el.append(body, edit);
		document.querySelector('#turns').append(el); el.lastElementChild.scrollIntoView({ block: 'end' }); }); true`)
	b.wait("the highlighted code", `!!document.querySelector('#sample') && !!document.querySelector('#sample pre code.hljs .hljs-keyword') && !!document.querySelector('#sample pre button.copy')`)
	b.run("copying the code", chromedp.Click(chromedp.CSS(`#sample pre button.copy`)))
	b.wait("the copy done", `document.querySelector('#sample pre button.copy').dataset.copied === 'yes'`)
	type diffLook struct {
		Numbers []string `json:"numbers"`
		Tinted  bool     `json:"tinted"`
	}
	d := eval[diffLook](b, `(() => { const rows = [...document.querySelectorAll('#sample .diff > div')];
		const bg = (sel) => getComputedStyle(document.querySelector('#sample .diff > div.' + sel)).backgroundColor;
		return { numbers: rows.map((r) => r.dataset.ln.trim().replace(/ +/g, ' ')), tinted: bg('add') !== bg('ctx') && bg('del') !== bg('ctx') && bg('add') !== bg('del') }; })()`)
	if strings.Join(d.Numbers, ",") != "1 1,2,2,3 3,4" || !d.Tinted {
		t.Errorf("diff lines: numbers %q, tinted %v; want old and new line numbers and tinted added and deleted lines", d.Numbers, d.Tinted)
	}
	eval[bool](b, `document.querySelector('#log').scrollTop = document.querySelector('#log').scrollHeight; true`)
	b.shot("code-and-diff")
	eval[bool](b, `document.querySelector('#sample').remove(); true`)

	// The other views of the session.
	b.run("opening the files", chromedp.Click(chromedp.ID("#files-tab")))
	b.wait("the files", `!document.querySelector('#files').hidden && document.querySelectorAll('#entries li').length > 0`)
	b.shot("files")
	// Terminals: the session's own, named by what runs in them; one
	// another client started elsewhere is not listed.
	if err := o.c.CreateTerminal(ctx, &protocol.CreateTerminalParams{Channel: "ahp-terminal:/" + client.NewID(),
		Claim: &protocol.TerminalClientClaim{ClientID: o.c.ID()}, Name: protocol.Ptr("someone else's"),
		Cwd: protocol.Ptr(protocol.URI("file://" + dir))}); err != nil {
		t.Fatal(err)
	}
	b.run("opening the terminals", chromedp.Click(chromedp.ID("#term-tab")))
	b.run("starting a terminal", chromedp.Click(chromedp.ID("#term-new")))
	b.wait("the terminal", `!!document.querySelector('#term-screen .xterm-rows') && document.querySelectorAll('#term-list .tab').length === 1`)
	if names := eval[[]string](b, `[...document.querySelectorAll('#term-list .tab')].map((e) => e.textContent)`); len(names) != 1 || !strings.HasPrefix(names[0], "shell · ") {
		t.Errorf("terminals listed: %q, want this session's one shell", names)
	}
	b.shot("terminals")
	b.run("closing the terminal", chromedp.Click(chromedp.ID("#term-dispose")))
	b.wait("the terminal gone", `!window.ahpApp.terms.uri`)
	b.run("opening the changes", chromedp.Click(chromedp.ID("#changes-tab")))
	b.shot("changes")
	b.run("back to the chat", chromedp.Click(chromedp.ID("#changes-close")))
	if v.phone {
		b.run("going back to the list", chromedp.Click(chromedp.ID("#back")))
		b.wait("the list", `getComputedStyle(document.querySelector('#side')).display !== 'none'`)
	}
	b.shot("sessions")
	t.Logf("%s: %d screenshots in %s", v.name, b.tab.Shots, b.tab.Dir)
}

// TestBrowserInstallAndNotify: the page is installable (a manifest, and a
// service worker that keeps the app shell and nothing else), and, once
// the user turns notifications on, tells them when a session needs them
// while the page is hidden, and not while it is shown.
func TestBrowserInstallAndNotify(t *testing.T) {
	_, url := testHost(t)
	b := newBrowser(t, 1000, 700)
	b.run("opening the page", chromedp.Navigate(url+"/"))
	b.wait("the connection", `document.body.dataset.conn === 'connected'`)
	b.wait("the service worker in control", `!!navigator.serviceWorker.controller`)
	eval[bool](b, `window.__keys = null; caches.open('ahpd-shell-v1').then((c) => c.keys()).then((k) => { window.__keys = k.map((r) => new URL(r.url).pathname + new URL(r.url).search); }); true`)
	b.wait("the cache listed", `Array.isArray(window.__keys) && window.__keys.includes('/js/app.js')`)
	keys := eval[[]string](b, `window.__keys`)
	for _, k := range keys {
		if k != "/" && k != "/app.css" && k != "/manifest.webmanifest" && !strings.HasPrefix(k, "/js/") && !strings.HasPrefix(k, "/vendor/") && !strings.HasPrefix(k, "/icon-") {
			t.Errorf("the service worker keeps %q, which is not part of the app shell", k)
		}
	}
	eval[bool](b, `window.__manifest = null; fetch(document.querySelector('link[rel=manifest]').href).then((r) => r.json()).then((m) => { window.__manifest = m; }); true`)
	b.wait("the manifest", `!!window.__manifest && window.__manifest.display === 'standalone' && window.__manifest.icons.length === 2`)

	b.sessionIn(url, t.TempDir(), "a folder")
	b.wait("the chat", `!!window.ahpApp.chatURI && !!window.ahpApp.client.state(window.ahpApp.chatURI)`)
	// Notifications: off by default; turned on, the browser's permission
	// (granted here) is asked.
	if on := eval[bool](b, `document.querySelector('#notify').checked`); on {
		t.Error("notifications are on before the user turned them on")
	}
	eval[bool](b, `window.__notes = []; window.__asked = 0;
		window.Notification = class { static permission = 'default';
			static requestPermission() { window.__asked++; window.Notification.permission = 'granted'; return Promise.resolve('granted'); }
			constructor(title, opts) { window.__notes.push(title); } close() {} };
		true`)
	b.run("turning notifications on", chromedp.Click(chromedp.ID("#notify")))
	b.wait("the permission asked", `window.__asked === 1 && localStorage.getItem('ahpd-notify') === 'on'`)
	chatURI := eval[string](b, `window.ahpApp.chatURI`)
	o, sub, _ := otherOn(t, url, chatURI)
	o.chat = sub
	o.say("while the page is shown")
	b.wait("the reply", lastTurn+`.includes('You said: while the page is shown')`)
	if n := eval[[]string](b, `window.__notes`); len(n) != 0 {
		t.Errorf("notifications while the page is shown: %q", n)
	}
	eval[bool](b, `Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' }); true`)
	o.say("/input Your name?")
	b.wait("the notification", `window.__notes.some((n) => n.endsWith(': needs you'))`)
	t.Logf("notifications: %q", eval[[]string](b, `window.__notes`))
}
