package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/automation"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/web"
)

// TestBrowserAutomations: the page lists the host's automations, creates
// one with a schedule (a bad expression is refused with the host's reason
// in the form), runs it, shows the completed run with a link to its
// session, and disables and enables it.
func TestBrowserAutomations(t *testing.T) {
	st := store.NewMemory()
	h, err := host.New(&host.Options{
		Store:       st,
		Agents:      []agent.Backend{echo.New(&echo.Options{WordDelay: -1})},
		Automations: automation.Plug(&automation.Options{Store: st}),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(h.WebSocketHandler(nil)))
	t.Cleanup(func() { srv.Close(); h.Close() })

	b := newBrowser(t, 1000, 800)
	b.run("opening the page", chromedp.Navigate(srv.URL+"/"))
	b.wait("the connection", `document.body.dataset.conn === 'connected'`)
	b.wait("the automations button", `!document.querySelector('#automations-btn').hidden`)
	b.run("opening the automations", chromedp.Click(chromedp.ID("#automations-btn")))
	b.wait("the empty list", `!document.querySelector('#automations').hidden && !document.querySelector('#a-empty').hidden`)
	b.run("opening the form", chromedp.Click(chromedp.ID("#a-new")))
	b.wait("the agents in the form", `document.querySelector('#a-provider').options.length > 0`)
	b.run("a bad schedule",
		chromedp.SendKeys(chromedp.ID("#a-title"), "Morning summary"),
		chromedp.SendKeys(chromedp.ID("#a-prompt"), "summarize the news"),
		chromedp.SendKeys(chromedp.ID("#a-cron"), "0 9 * *"),
		chromedp.SetValue(chromedp.ID("#a-tz"), "Europe/Berlin"),
		chromedp.Click(chromedp.ID("#a-create")))
	b.wait("the host's reason", `!document.querySelector('#a-error').hidden && document.querySelector('#a-error').textContent.includes('five fields')`)
	b.run("a good schedule", chromedp.SetValue(chromedp.ID("#a-cron"), "0 9 * * 1-5"), chromedp.Click(chromedp.ID("#a-create")))
	b.wait("the automation listed", `document.querySelectorAll('#a-list .a-entry').length === 1 && document.querySelector('#a-form').hidden`)
	if got := eval[string](b, `document.querySelector('#a-list .a-entry').textContent`); !contains(got, "Morning summary", "0 9 * * 1-5 (Europe/Berlin)", "next", "No runs yet.") {
		t.Errorf("the entry reads %q", got)
	}
	b.run("running it", chromedp.Click(chromedp.CSS(`#a-list .a-run`)))
	b.wait("the completed run", `document.querySelector('#a-list .a-run-row[data-status=completed] a') !== null`)
	b.shot("automations")
	b.run("disabling it", chromedp.Click(chromedp.CSS(`#a-list .a-toggle`)))
	b.wait("disabled", `document.querySelector('#a-list .a-toggle').textContent === 'Enable'`)
	b.run("enabling it", chromedp.Click(chromedp.CSS(`#a-list .a-toggle`)))
	b.wait("enabled", `document.querySelector('#a-list .a-toggle').textContent === 'Disable'`)
	b.run("opening the run's session", chromedp.Click(chromedp.CSS(`#a-list .a-run-row a`)))
	b.wait("the session", `!document.querySelector('#session').hidden && document.querySelector('#automations').hidden`)
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
