package web_test

import (
	"strings"
	"testing"
)

// TestBrowserReloadAfterRestart: a page reloaded against a host that has
// never seen it (ahpd restarted with a fresh store) keeps its clientId;
// its reconnect gets fresh snapshots instead of a replay, and the session
// the old host had is gone from the page.
func TestBrowserReloadAfterRestart(t *testing.T) {
	_, first := testHost(t)
	_, second := testHost(t)
	px := newProxy(t, strings.TrimPrefix(first, "http://"))
	b := newBrowser(t, 1000, 700)
	b.sessionIn("http://"+px.ln.Addr().String(), t.TempDir(), "a directory")
	b.wait("the session", `!!window.ahpApp.sessionURI && !!window.ahpApp.client.state(window.ahpApp.sessionURI) && document.querySelectorAll('#sessions li').length === 1`)
	clientID := eval[string](b, `window.ahpApp.client.clientId`)

	px.drop()
	px.retarget(strings.TrimPrefix(second, "http://"))
	b.wait("the page to see the drop", `document.body.dataset.conn !== 'connected'`)
	b.reloadWhileDown(px)
	if got := eval[string](b, `window.ahpApp.client.clientId`); got != clientID {
		t.Errorf("after a reload the page is client %q, want %q", got, clientID)
	}
	resumed := eval[map[string]any](b, `window.ahpApp.client.lastResume || {}`)
	t.Logf("resumed: %v", resumed)
	if resumed["reloaded"] != true || resumed["replayed"] != false {
		t.Errorf("the page resumed with %v, want fresh snapshots after a reload", resumed)
	}
	b.wait("the old host's session gone", `document.querySelectorAll('#sessions li').length === 0 && !window.ahpApp.client.mirrors.has(window.ahpApp.sessionURI)`)
	if n := eval[int](b, `window.ahpApp.client.mirrors.size`); n != 1 {
		t.Errorf("the page mirrors %d channels, want the root alone", n)
	}
}
