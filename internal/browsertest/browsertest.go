// Package browsertest starts headless Chromium tabs for the browser tests
// (the web page's and VS Code's) and keeps numbered screenshots of their
// steps among the test's artifacts.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium returns the path of a Chromium or Chrome binary: $AHP_CHROMIUM,
// else the first found on PATH. Without one the test skips, except under
// CI=true, where it fails; what names the tests in those messages.
func Chromium(tb testing.TB, what string) string {
	tb.Helper()
	if p := os.Getenv("AHP_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("no Chromium found (install Debian's chromium, or set AHP_CHROMIUM); %s must run under CI=true", what)
	}
	tb.Skipf("no Chromium found (install chromium or set AHP_CHROMIUM); skipping %s", what)
	return ""
}

// Options says how to start a tab.
type Options struct {
	// What names the tests in the messages when Chromium is missing.
	What string
	// Width and Height are the window's size.
	Width, Height int
	// Listen, when set, receives the tab's events (to log page errors).
	Listen func(ev any)
	// Flags are added to the allocator's options.
	Flags []chromedp.ExecAllocatorOption
}

// Tab is one headless Chromium tab, stopped when the test ends.
type Tab struct {
	TB  testing.TB
	Ctx context.Context
	// Dir is the test's artifact folder, where Shot writes.
	Dir string
	// Shots counts the screenshots taken.
	Shots int
}

// Start starts Chromium with a fresh profile and opens a tab, failing the
// test if it cannot.
func Start(tb testing.TB, o Options) *Tab {
	tb.Helper()
	exe := Chromium(tb, o.What)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.WindowSize(o.Width, o.Height),
	)
	opts = append(opts, o.Flags...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	topts := []chromedp.ContextOption{chromedp.WithErrorf(tb.Logf)}
	if o.Listen != nil {
		topts = append(topts, chromedp.WithListener(o.Listen))
	}
	ctx, cancelTab := chromedp.NewContext(actx, topts...)
	tb.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("starting %s: %v", exe, err)
	}
	return &Tab{TB: tb, Ctx: ctx, Dir: tb.ArtifactDir()}
}

// Shot saves a screenshot of the page as a numbered test artifact; a
// screenshot that fails is logged, not fatal.
func (t *Tab) Shot(name string) {
	t.Shots++
	ctx, cancel := context.WithTimeout(t.Ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.TB.Logf("screenshot %s: %v", name, err)
		return
	}
	name = strings.Map(func(r rune) rune {
		if r == ' ' || r == '/' || r == '\'' || r == '"' {
			return '-'
		}
		return r
	}, name)
	path := filepath.Join(t.Dir, fmt.Sprintf("%02d-%s.png", t.Shots, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.TB.Logf("screenshot %s: %v", name, err)
	}
}
