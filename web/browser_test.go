package web_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/browsertest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/web"
	"github.com/ahp-go/ahp/workspace"
)

// proxy forwards TCP connections to a target and can cut them all and
// refuse new ones for a while: a network drop, as the browser sees it.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	down   bool
	wg     sync.WaitGroup
}

func newProxy(t testing.TB, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.drop(); p.wg.Wait() })
	return p
}

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target) // under p.mu, as retarget writes it
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// drop cuts every connection and refuses new ones until restore.
func (p *proxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

// retarget sends the connections made from now on to target.
func (p *proxy) retarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
}

func (p *proxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// browser is one headless Chromium tab on the page, plus a place for the
// screenshots of each step.
type browser struct {
	t   testing.TB
	ctx context.Context
	tab *browsertest.Tab
}

func newBrowser(t testing.TB, width, height int64) *browser {
	tab := browsertest.Start(t, browsertest.Options{
		What:   "the browser tests",
		Width:  int(width),
		Height: int(height),
		Flags:  []chromedp.ExecAllocatorOption{chromedp.Flag("disable-quic", true)},
		Listen: func(ev any) {
			// The page's uncaught errors and console errors go to the test log.
			switch ev := ev.(type) {
			case *runtime.EventExceptionThrown:
				d := ev.ExceptionDetails
				desc := ""
				if d.Exception != nil {
					desc = d.Exception.Description
				}
				t.Logf("page exception: %s %s (%s:%d)", d.Text, desc, d.URL, d.LineNumber)
			case *runtime.EventConsoleAPICalled:
				if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
					var parts []string
					for _, a := range ev.Args {
						parts = append(parts, string(a.Value)+a.Description)
					}
					t.Logf("page console %s: %s", ev.Type, strings.Join(parts, " "))
				}
			}
		},
	})
	return &browser{t: t, ctx: tab.Ctx, tab: tab}
}

// run runs chromedp actions with a deadline, failing the test on error.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
		b.t.Fatalf("%s: %v", what, err)
	}
}

// wait polls a JavaScript condition in the page until it holds.
// sessionIn opens the page at url and, once it is connected, creates a
// session in dir (described as where) with the new-session form.
func (b *browser) sessionIn(url, dir, where string) {
	b.t.Helper()
	b.run("opening the page", chromedp.Navigate(url+"/"))
	b.wait("the connection", `document.body.dataset.conn === 'connected'`)
	b.run("opening the new-session form", chromedp.Click(chromedp.ID("#new-session")))
	b.wait("the agent list", `document.querySelector('#c-provider').options.length > 0`)
	b.run("creating a session in "+where, chromedp.SendKeys(chromedp.ID("#c-dir"), dir), chromedp.Click(chromedp.ID("#create-submit")))
}

func (b *browser) wait(what, cond string) {
	b.t.Helper()
	b.waitEvery(what, 50*time.Millisecond, cond)
}

func (b *browser) waitEvery(what string, every time.Duration, cond string) {
	b.t.Helper()
	b.run("waiting for "+what, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(45*time.Second), chromedp.WithPollingInterval(every)))
}

// eval evaluates JavaScript in the page and returns its value.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// reloadWhileDown reloads the page while px refuses connections (the page
// leaves its identity for the reload on the way out), lets connections
// through again, and waits until the reloaded page is connected.
func (b *browser) reloadWhileDown(px *proxy) {
	b.t.Helper()
	eval[bool](b, `(window.oldPage = true, setTimeout(() => location.reload(), 0), true)`)
	// The new document is the cached shell (the service worker's) or the
	// browser's error page; either way the old page has gone.
	b.waitAcross("the reload", `!window.oldPage && document.readyState === 'complete'`)
	px.restore()
	served := eval[bool](b, `!!window.ahpApp`)
	b.t.Logf("reloaded with the host out of reach: the page started from the cached shell: %v", served)
	if !served {
		// The error page stands at the page's address: load it again.
		b.run("opening the page again", chromedp.Reload())
	}
	b.wait("the connection after the reload", `document.body.dataset.conn === 'connected'`)
}

// waitAcross is wait for a condition that holds only after a navigation:
// it evaluates the condition again until it holds, through the moments
// when the old document has gone and the new one has no context yet.
func (b *browser) waitAcross(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
			b.t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shot saves a screenshot of the page as a numbered test artifact.
func (b *browser) shot(name string) { b.tab.Shot(name) }

// testHost runs a host with the echo agent (no pause between words)
// behind the web handler, and returns the host and its HTTP URL.
func testHost(t testing.TB) (*host.Host, string) {
	return testHostWith(t, nil)
}

func testHostWith(t testing.TB, ws *host.WebSocketOptions) (*host.Host, string) {
	h, err := host.New(&host.Options{
		Agents:    []agent.Backend{echo.New(&echo.Options{WordDelay: -1})},
		Workspace: workspace.New(nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(h.WebSocketHandler(ws)))
	t.Cleanup(func() { srv.Close(); h.Close() })
	return h, srv.URL
}

// other is a second client: the Go SDK on the host's own URL.
type other struct {
	t    *testing.T
	c    *client.Client
	chat *client.Subscription
}

// otherOn is newOther subscribed to uri, with a context of 20 s for what
// the test does with it.
func otherOn(t *testing.T, url, uri string) (*other, *client.Subscription, context.Context) {
	t.Helper()
	o := newOther(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	sub, err := o.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: uri})
	if err != nil {
		t.Fatal(err)
	}
	return o, sub, ctx
}

func newOther(t *testing.T, url string) *other {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, "ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &other{t: t, c: c}
}

func (o *other) follow(chatURI string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := o.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: chatURI})
	if err != nil {
		o.t.Fatal(err)
	}
	o.chat = sub
}

func (o *other) say(text string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := o.chat.Dispatch(ctx, &protocol.ChatTurnStartedAction{
		TurnID:    client.NewID(),
		StartedAt: protocol.FormatTime(time.Now()),
		Message:   protocol.Message{Text: text, Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}},
	}); err != nil {
		o.t.Fatal(err)
	}
}

// state waits until the followed chat satisfies ok, and returns it.
func (o *other) state(what string, ok func(*protocol.ChatState) bool) *protocol.ChatState {
	o.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := o.chat.Chat()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			b, _ := protocol.Marshal(st)
			o.t.Fatalf("the second client never saw %s; its chat state: %.2000s", what, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sendPrompt types text into the composer and sends it.
func (b *browser) sendPrompt(text string) {
	b.t.Helper()
	b.run("typing "+text, chromedp.SendKeys(chromedp.ID("#prompt"), text), chromedp.Click(chromedp.ID("#send")))
}

// lastTurn is a JavaScript expression for the text of the last completed
// turn.
const lastTurn = `(document.querySelector('#turns article:last-child')?.textContent || '')`

// firstPaint is the page's first contentful paint, in milliseconds from
// the start of its navigation as the page measured it; -1 when none.
func firstPaint(b *browser) float64 {
	return eval[float64](b, `performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1`)
}

// BenchmarkFirstPaint loads the page from ahpd in headless Chromium and
// reports its first contentful paint (fcp-ms, as the page measured it) and
// the time until it is connected to the host (connected-ms).
func BenchmarkFirstPaint(b *testing.B) {
	_, url := testHost(b)
	br := newBrowser(b, 1200, 860)
	var fcp, connected float64
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		br.run("opening the page", chromedp.Navigate(url+"/?load="+strconv.Itoa(i)))
		br.wait("the connection", `document.body.dataset.conn === 'connected'`)
		connected += float64(time.Since(start).Microseconds()) / 1000
		fcp += firstPaint(br)
	}
	b.ReportMetric(fcp/float64(b.N), "fcp-ms")
	b.ReportMetric(connected/float64(b.N), "connected-ms")
}

// TestBrowser drives the page in headless Chromium through the main
// flows, one step after another on one session, with a screenshot of each.
func TestBrowser(t *testing.T) {
	h, url := testHost(t)
	_ = h
	px := newProxy(t, strings.TrimPrefix(url, "http://"))
	page := "http://" + px.ln.Addr().String() + "/?turns=2"
	b := newBrowser(t, 1200, 860)

	// First paint, measured by the page itself.
	b.run("opening the page", chromedp.Navigate(page))
	b.wait("the connection", `document.body.dataset.conn === 'connected'`)
	// How soon is BenchmarkFirstPaint's; here the page must paint.
	if fcp := firstPaint(b); fcp < 0 {
		t.Error("the page reports no first contentful paint")
	}
	t.Logf("protocol version negotiated by the page: %s", eval[string](b, `window.ahpApp.client.protocolVersion`))
	b.shot("connected")

	// Create a session with the echo agent and its model.
	b.run("opening the new-session form", chromedp.Click(chromedp.ID("#new-session")))
	b.wait("the agent list", `document.querySelector('#c-provider').options.length > 0`)
	b.run("choosing the model", chromedp.SetValue(chromedp.ID("#c-model"), "echo-1"))
	b.shot("create-session")
	b.run("creating the session", chromedp.Click(chromedp.ID("#create-submit")))
	b.wait("the session view", `!document.querySelector('#session').hidden && document.querySelectorAll('#chats .tab').length === 1`)
	b.wait("the session in the list", `document.querySelectorAll('#sessions li').length === 1`)
	sessionURI := eval[string](b, `window.ahpApp.sessionURI`)
	b.wait("the chat", `!!window.ahpApp.client.state(window.ahpApp.chatURI)`)
	chatURI := eval[string](b, `window.ahpApp.chatURI`)
	b.shot("session")

	// A prompt streams back, word by word, as markdown. The reply takes
	// 3 s, so that a busy machine still looks at it before it ends.
	b.sendPrompt("/slow 60")
	b.wait("the reply to stream in", `(document.querySelector('#active .stream')?.textContent || '').includes('word3')`)
	partial := eval[string](b, `document.querySelector('#active .stream').textContent`)
	if strings.Contains(partial, "word60") {
		t.Errorf("the reply was not streamed: the first look already had all of it: %q", partial)
	}
	b.shot("streaming")
	b.wait("the reply to complete", lastTurn+`.includes('word60') && !document.querySelector('#active article')`)
	b.sendPrompt("make this **bold**")
	b.wait("markdown", `document.querySelector('#turns article:last-child .stream strong')?.textContent === 'bold'`)
	model := eval[string](b, `document.querySelector('#turns article:last-child .user .model')?.textContent || ''`)
	if model != "echo-1" {
		t.Errorf("the turn shows model %q, want echo-1 (the model chosen at creation travels on each message)", model)
	}
	b.wait("the session idle again, with its chat read", `document.querySelector('#s-status').classList.contains('idle') && !document.querySelector('#sessions li .unread')`)
	b.shot("replied")

	// A tool call waits for confirmation; allowing it lets it run.
	b.sendPrompt("/tool ping")
	b.wait("the confirmation", `!!document.querySelector('#active .status-pending-confirmation .actions button.primary')`)
	b.shot("tool-confirmation")
	b.run("allowing the tool", chromedp.Click(chromedp.CSS(`#active .status-pending-confirmation .actions button.primary`)))
	b.wait("the tool result", lastTurn+`.includes('The tool said: ping') && !!document.querySelector('#turns article:last-child .status-completed')`)
	b.shot("tool-done")

	// An input request is answered in the page.
	b.sendPrompt("/input Your name?")
	b.wait("the question", `!!document.querySelector('#active form.part.input input[type=text]')`)
	b.run("answering", chromedp.SendKeys(chromedp.CSS(`#active form.part.input input[type=text]`), "Ada"),
		chromedp.Click(chromedp.CSS(`#active form.part.input button[type=submit]`)))
	b.wait("the answer echoed", lastTurn+`.includes('You answered: Ada')`)
	b.shot("input-answered")

	// A turn run by another client appears live.
	o := newOther(t, url)
	o.follow(chatURI)
	o.say("hello from another client")
	b.wait("the other client's turn", lastTurn+`.includes('You said: hello from another client')`)
	b.shot("second-client")

	// The composer keeps its draft in the chat, debounced, and clears it on send.
	b.run("typing a draft", chromedp.SendKeys(chromedp.ID("#prompt"), "half a thought"))
	o.state("the draft", func(st *protocol.ChatState) bool { return st.Draft != nil && st.Draft.Text == "half a thought" })
	b.run("sending the draft", chromedp.Click(chromedp.ID("#send")))
	b.wait("the draft's turn", lastTurn+`.includes('You said: half a thought')`)
	if d := eval[string](b, `JSON.stringify(window.ahpApp.client.state(window.ahpApp.chatURI).draft || null)`); d != "null" {
		t.Errorf("the page still has the draft %s after sending it", d)
	}
	o.state("the draft cleared", func(st *protocol.ChatState) bool { return st.Draft == nil })

	// Queue a message behind a running turn, then cancel a turn. The turn
	// would run for hours: it ends only by the cancel, however late that
	// comes.
	b.sendPrompt("/slow 100000")
	b.wait("the turn to run", `!!document.querySelector('#active article')`)
	b.run("queueing", chromedp.SendKeys(chromedp.ID("#prompt"), "queued after"), chromedp.Click(chromedp.ID("#queue")))
	b.wait("the queued message", `(document.querySelector('#pending')?.textContent || '').includes('queued after')`)
	b.shot("queued")
	b.run("cancelling", chromedp.Click(chromedp.ID("#cancel")))
	b.wait("the queued turn", lastTurn+`.includes('You said: queued after') && document.querySelector('#pending').children.length === 0`)
	cancelled := eval[bool](b, `[...document.querySelectorAll('#turns article')].some((a) => a.classList.contains('state-cancelled'))`)
	if !cancelled {
		t.Error("the cancelled turn does not show as cancelled")
	}
	b.shot("cancelled-and-queued")

	// The network drops; meanwhile the other client runs a turn. Once the
	// network is back the page catches up without a reload.
	px.drop()
	b.wait("the page to see the drop", `document.body.dataset.conn !== 'connected'`)
	o.say("said while you were away")
	o.state("its reply", func(st *protocol.ChatState) bool {
		return st.ActiveTurn == nil && len(st.Turns) > 0 && st.Turns[len(st.Turns)-1].Message.Text == "said while you were away"
	})
	b.shot("offline")
	px.restore()
	b.wait("the reconnection", `document.body.dataset.conn === 'connected'`)
	b.wait("the missed turn", lastTurn+`.includes('You said: said while you were away')`)
	resumed := eval[map[string]any](b, `window.ahpApp.client.lastResume`)
	t.Logf("resumed: %v", resumed)
	b.shot("reconnected")

	// A reload shows the whole history, paged two turns at a time.
	before := eval[[]string](b, `[...document.querySelectorAll('#turns article')].map((a) => a.dataset.turn)`)
	b.run("reloading", chromedp.Reload())
	b.wait("the connection after reload", `document.body.dataset.conn === 'connected'`)
	b.wait("the whole history", fmt.Sprintf(`document.querySelectorAll('#turns article').length === %d && document.querySelector('#older').hidden`, len(before)))
	after := eval[[]string](b, `[...document.querySelectorAll('#turns article')].map((a) => a.dataset.turn)`)
	if strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("after reload the turns are %v, want %v", after, before)
	}
	b.shot("reloaded")

	// A draft typed while the host is out of reach, then a reload: the
	// reloaded page goes on as the same client, resumes with reconnect
	// once the host is back, and sends the draft the host never saw.
	clientID := eval[string](b, `window.ahpApp.client.clientId`)
	px.drop()
	b.wait("the page to see the drop", `document.body.dataset.conn !== 'connected'`)
	b.run("typing a draft offline", chromedp.SendKeys(chromedp.ID("#prompt"), "typed while offline"))
	b.wait("the draft pending", `window.ahpApp.client.mirrors.get(window.ahpApp.chatURI)?.pending.length > 0`)
	b.reloadWhileDown(px)
	if got := eval[string](b, `window.ahpApp.client.clientId`); got != clientID {
		t.Errorf("after a reload the page is client %q, want %q", got, clientID)
	}
	resumed = eval[map[string]any](b, `window.ahpApp.client.lastResume || {}`)
	t.Logf("resumed after the reload: %v", resumed)
	if resumed["reloaded"] != true || resumed["replayed"] != true {
		t.Errorf("the reloaded page did not resume with a replay: %v", resumed)
	}
	o.state("the draft typed offline", func(st *protocol.ChatState) bool { return st.Draft != nil && st.Draft.Text == "typed while offline" })
	b.wait("the draft in the composer", `document.querySelector('#prompt').value === 'typed while offline'`)
	eval[bool](b, `(document.querySelector('#prompt').value = '', window.ahpApp.draftChanged(), window.ahpApp.flushDraft(), true)`)
	o.state("the draft cleared", func(st *protocol.ChatState) bool { return st.Draft == nil })

	// A second chat in the same session.
	b.run("adding a chat", chromedp.Click(chromedp.ID("#new-chat")))
	b.wait("the second chat", `document.querySelectorAll('#chats .tab').length === 2 && document.querySelector('#turns').children.length === 0 && !!window.ahpApp.client.state(window.ahpApp.chatURI)`)
	b.sendPrompt("in the second chat")
	b.wait("its reply", lastTurn+`.includes('You said: in the second chat')`)
	b.shot("second-chat")

	// 20,000 deltas render without freezing the page: the longest task of
	// the page's main thread stays under 100 ms. The other client sends the
	// prompt, so the page does nothing but render. Tasks are the browser's
	// own long tasks (PerformanceObserver "longtask", 50 ms or more, wall
	// clock); see longReply for how the main thread is kept from waiting
	// for a CPU that other processes hold.
	o.follow(eval[string](b, `window.ahpApp.chatURI`))
	m := longReply(b, o, 20000)
	t.Logf("20,000-delta reply rendered in %v; %s; the page saw %d long tasks (50 ms or more; the longest %.0f ms) and %d long animation frames (the longest %.0f ms)",
		m.elapsed.Round(time.Millisecond), m.main, m.longTasks, m.longest, m.longFrames, m.longestFrame)
	if m.longest >= 100 {
		t.Errorf("the longest main-thread task took %.0f ms, want under 100 ms (%s)", m.longest, m.main)
	}
	b.shot("long-reply")

	// Archive, then remove, a session.
	b.run("archiving", chromedp.Click(chromedp.ID("#archive")))
	b.wait("the session to leave the list", `document.querySelectorAll('#sessions li').length === 0`)
	b.run("showing archived sessions", chromedp.Click(chromedp.ID("#show-archived")))
	b.wait("the archived session", `document.querySelector('#sessions li .tag')?.textContent === 'archived'`)
	b.shot("archived")
	eval[bool](b, `window.confirm = () => true; document.querySelector('#remove').click(); true`)
	b.wait("the session to be gone", `document.querySelectorAll('#sessions li').length === 0 && document.querySelector('#session').hidden`)
	b.shot("removed")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := o.c.ListSessions(ctx, &protocol.ListSessionsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		if s.Resource == sessionURI {
			t.Errorf("session %s still listed after removal", sessionURI)
		}
	}
}

// TestBrowserPhoneWidth checks the layout at phone width: one pane at a
// time, nothing wider than the screen.
func TestBrowserPhoneWidth(t *testing.T) {
	quietShell(t)
	_, url := testHost(t)
	b := newBrowser(t, 390, 844)
	b.run("emulating a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile), chromedp.Navigate(url+"/"))
	b.wait("the connection", `document.body.dataset.conn === 'connected'`)
	b.run("creating a session", chromedp.Click(chromedp.ID("#new-session")))
	b.wait("the agent list", `document.querySelector('#c-provider').options.length > 0`)
	b.run("creating", chromedp.SendKeys(chromedp.ID("#c-dir"), t.TempDir()), chromedp.Click(chromedp.ID("#create-submit")))
	b.wait("the session view", `!!window.ahpApp.client.state(window.ahpApp.chatURI)`)
	b.sendPrompt("/tool from a phone")
	b.wait("the confirmation", `!!document.querySelector('#active .status-pending-confirmation .actions button.primary')`)
	type layout struct {
		ScrollWidth int  `json:"scrollWidth"`
		SideShown   bool `json:"sideShown"`
		MainShown   bool `json:"mainShown"`
	}
	check := `({ scrollWidth: document.documentElement.scrollWidth,
		sideShown: getComputedStyle(document.querySelector('#side')).display !== 'none',
		mainShown: getComputedStyle(document.querySelector('#main')).display !== 'none' })`
	l := eval[layout](b, check)
	if l.ScrollWidth > 390 || l.SideShown || !l.MainShown {
		t.Errorf("in a session at 390 px: %+v, want the session alone and no horizontal scrolling", l)
	}
	b.shot("phone-session")
	// A failed turn shows its error (an error part at 1.x, Turn.error before).
	b.run("confirming", chromedp.Click(chromedp.CSS(`#active .status-pending-confirmation .actions button.primary`)))
	b.wait("the tool result", lastTurn+`.includes('The tool said: from a phone')`)
	b.sendPrompt("/error")
	b.wait("the error", `(document.querySelector('#turns article:last-child .part.error')?.textContent || '').includes('failed this turn on purpose') && !!document.querySelector('#turns article:last-child .turn-foot .tag.error')`)
	b.shot("phone-error")
	// A terminal fits the phone's width.
	b.run("opening the terminals", chromedp.Click(chromedp.ID("#term-tab")))
	b.run("starting a terminal", chromedp.Click(chromedp.ID("#term-new")))
	b.wait("the terminal, sized to the screen", `!!document.querySelector('#term-screen .xterm-rows') &&
		window.ahpApp.client.state(window.ahpApp.terms.uri)?.cols === window.ahpApp.terms.emu.term.cols && window.ahpApp.terms.emu.term.cols < 60`)
	l = eval[layout](b, check)
	if l.ScrollWidth > 390 {
		t.Errorf("a terminal at 390 px: %+v, want no horizontal scrolling", l)
	}
	b.shot("phone-terminal")
	b.run("closing the terminal", chromedp.Click(chromedp.ID("#term-dispose")))
	b.wait("the terminal gone", `!window.ahpApp.terms.uri`)
	b.run("back to the chat", chromedp.Click(chromedp.ID("#terms-close")))
	b.run("going back", chromedp.Click(chromedp.ID("#back")))
	b.wait("the list", `getComputedStyle(document.querySelector('#side')).display !== 'none'`)
	l = eval[layout](b, check)
	if l.ScrollWidth > 390 || !l.SideShown || l.MainShown {
		t.Errorf("the list at 390 px: %+v, want the list alone and no horizontal scrolling", l)
	}
	b.shot("phone-list")
}

// TestBrowserToken opens the page of a host that needs a token: from the
// link ahpd prints (token in the fragment, removed from the address bar
// once read), and without it, where the page asks for the token.
func TestBrowserToken(t *testing.T) {
	_, url := testHostWith(t, &host.WebSocketOptions{Token: "s3cret"})
	b := newBrowser(t, 1000, 700)
	b.run("opening the printed link", chromedp.Navigate(url+"/#token=s3cret"))
	b.wait("the connection", `document.body.dataset.conn === 'connected'`)
	if h := eval[string](b, `location.href`); strings.Contains(h, "s3cret") {
		t.Errorf("the token stays in the address bar: %s", h)
	}
	b.shot("token-from-link")

	b2 := newBrowser(t, 1000, 700)
	b2.run("opening the page without the token", chromedp.Navigate(url+"/"))
	b2.wait("the token field", `!document.querySelector('#token-form').hidden`)
	// The page says the host needs a token rather than retrying for ever.
	b2.wait("the token refusal", `document.body.dataset.conn === 'unauthorized' && document.querySelector('#conn-text').textContent.includes('needs a token')`)
	b2.shot("token-asked")
	b2.run("entering a wrong token", chromedp.SendKeys(chromedp.ID("#token-input"), "wrong"), chromedp.Click(chromedp.CSS("#token-form button")))
	b2.wait("the wrong token refused", `document.body.dataset.conn === 'unauthorized' && document.querySelector('#conn-text').textContent.includes('refused this token')`)
	if txt := eval[string](b2, `document.querySelector('#conn-text').textContent`); strings.Contains(txt, "retrying") {
		t.Errorf("a wrong token shows %q", txt)
	}
	b2.shot("token-wrong")
	eval[bool](b2, `document.querySelector("#token-input").value = ""; true`)
	b2.run("entering the token", chromedp.SendKeys(chromedp.ID("#token-input"), "s3cret"), chromedp.Click(chromedp.CSS("#token-form button")))
	b2.wait("the connection", `document.body.dataset.conn === 'connected'`)
	b2.shot("token-entered")
}

// replyCost is what rendering a long reply cost the page.
type replyCost struct {
	elapsed      time.Duration // until the last word showed
	longTasks    int           // long tasks the page observed (50 ms or more)
	longest      float64       // the longest of those, ms (0: none)
	longFrames   int           // animation frames of 50 ms or more
	longestFrame float64       // the longest of those, ms
	main         string        // what the renderer's main thread did meanwhile
}

// longReply has the other client send a prompt of n words, which the echo
// agent streams back as n+2 deltas, and measures the page while it renders
// them.
//
// A long task's duration is wall-clock time, so on a machine busy with
// other work it also counts time the main thread spent waiting for a CPU.
// For the measurement the renderers' main threads get a high scheduling
// priority (where the test may raise it, as root does), so that a task
// takes as long as the page's own work makes it; the thread's time on a
// CPU and waiting for one, from the kernel's scheduler statistics, are
// reported beside it.
func longReply(b *browser, o *other, n int) replyCost {
	b.t.Helper()
	eval[bool](b, `window.__long = []; window.__frames = []; window.__obs?.forEach((o) => o.disconnect());
		const watch = (type, into) => { const o = new PerformanceObserver((l) => { for (const e of l.getEntries()) into.push(e.duration); }); o.observe({ type }); return o; };
		window.__obs = [watch('longtask', window.__long)];
		if (PerformanceObserver.supportedEntryTypes.includes('long-animation-frame')) window.__obs.push(watch('long-animation-frame', window.__frames));
		true`)
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i+1)
	}
	last := words[n-1]
	turns := eval[int](b, `document.querySelectorAll('#turns article').length`)
	mains := b.rendererMains()
	before := mains.stats()
	start := time.Now()
	o.say(strings.Join(words, " "))
	// The check reads no layout (textContent of the block still growing,
	// not innerText of the whole reply), so polling does not load the page
	// it measures.
	b.waitEvery("the long reply", 200*time.Millisecond, fmt.Sprintf(`document.querySelectorAll('#turns article').length === %d &&
		(document.querySelector('#turns article:last-child .stream > .md-block:last-child')?.textContent || '').trimEnd().endsWith('%s')`, turns+1, last))
	var c replyCost
	c.elapsed = time.Since(start)
	c.main = mains.describe(before, mains.stats())
	mains.restore()
	// Entries are delivered after their task: let the observers catch up.
	b.run("letting the observers catch up", chromedp.Sleep(100*time.Millisecond))
	for _, d := range eval[[]float64](b, `window.__long`) {
		c.longTasks++
		c.longest = max(c.longest, d)
	}
	for _, d := range eval[[]float64](b, `window.__frames`) {
		c.longFrames++
		c.longestFrame = max(c.longestFrame, d)
	}
	return c
}
