package vscodetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium returns the path of a Chromium or Chrome binary: $AHP_CHROMIUM,
// else the first found on PATH. Without one the test skips, except under
// CI=true, where it fails.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AHP_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found (install Debian's chromium, or set AHP_CHROMIUM); the VS Code test is required under CI=true")
	}
	t.Skip("no Chromium found (install chromium or set AHP_CHROMIUM); skipping the VS Code test")
	return ""
}

// browser is one headless Chromium tab, with numbered screenshots of each
// step among the test's artifacts.
type browser struct {
	t     *testing.T
	ctx   context.Context
	dir   string
	shots int
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf), chromedp.WithListener(func(ev any) {
		// The workbench's uncaught errors go to the test log.
		if ev, ok := ev.(*runtime.EventExceptionThrown); ok {
			d := ev.ExceptionDetails
			desc := ""
			if d.Exception != nil {
				desc = d.Exception.Description
			}
			t.Logf("page exception: %s %.300s (%s:%d)", d.Text, desc, d.URL, d.LineNumber)
		}
	}))
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return &browser{t: t, ctx: ctx, dir: t.ArtifactDir()}
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
func (b *browser) shot(name string) {
	b.shots++
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	name = strings.Map(func(r rune) rune {
		if r == ' ' || r == '/' || r == '\'' || r == '"' {
			return '-'
		}
		return r
	}, name)
	path := filepath.Join(b.dir, fmt.Sprintf("%02d-%s.png", b.shots, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
	}
}

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
