package vscodetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ahp-go/ahp/internal/browsertest"
)

// browser is one headless Chromium tab, with numbered screenshots of each
// step among the test's artifacts.
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string
	tab *browsertest.Tab
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	tab := browsertest.Start(t, browsertest.Options{
		What:   "the VS Code test",
		Width:  1400,
		Height: 900,
		Listen: func(ev any) {
			// The workbench's uncaught errors go to the test log.
			if ev, ok := ev.(*runtime.EventExceptionThrown); ok {
				d := ev.ExceptionDetails
				desc := ""
				if d.Exception != nil {
					desc = d.Exception.Description
				}
				t.Logf("page exception: %s %.300s (%s:%d)", d.Text, desc, d.URL, d.LineNumber)
			}
		},
	})
	return &browser{t: t, ctx: tab.Ctx, dir: tab.Dir, tab: tab}
}

// run runs chromedp actions with a deadline, failing the test (with a
// screenshot) on error.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.failed(what)
		b.t.Fatalf("%s: %v", what, err)
	}
}

// wait polls a JavaScript condition in the page until it holds, for up to
// a minute (VS Code loads slowly on a busy machine).
func (b *browser) wait(what, cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 100*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(90*time.Second), chromedp.WithPollingInterval(200*time.Millisecond))); err != nil {
		b.failed("waiting for " + what)
		b.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// shot saves a screenshot of the page as a numbered test artifact.
func (b *browser) shot(name string) { b.tab.Shot(name) }

// poll reports whether a JavaScript condition holds within d.
func (b *browser) poll(cond string, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(b.ctx, d+5*time.Second)
	defer cancel()
	return chromedp.Do(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(d), chromedp.WithPollingInterval(100*time.Millisecond))) == nil
}

// retry runs try until it reports success, for up to d.
func (b *browser) retry(what string, d time.Duration, try func() bool) {
	b.t.Helper()
	deadline := time.Now().Add(d)
	for !try() {
		if time.Now().After(deadline) {
			b.failed(what)
			b.t.Fatalf("%s: not there after %v", what, d)
		}
		time.Sleep(time.Second)
	}
}

// failed keeps a screenshot and the workbench's DOM (dom.html, to find
// what a selector should be now) of a step that failed.
func (b *browser) failed(what string) {
	b.shot("failed " + what)
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil {
		b.t.Logf("reading the DOM: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(b.dir, "dom.html"), []byte(html), 0o644); err != nil {
		b.t.Logf("saving the DOM: %v", err)
	}
}
