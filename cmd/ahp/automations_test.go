package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/automation"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/store"
)

// TestAutomationsCommand: ahp automations creates, lists, shows, runs,
// disables, enables and removes automations on a host that serves them,
// and says so on one that does not.
func TestAutomationsCommand(t *testing.T) {
	st := store.NewMemory()
	hst, err := host.New(&host.Options{
		Store:       st,
		Agents:      []agent.Backend{echo.New(&echo.Options{WordDelay: -1})},
		Automations: automation.Plug(&automation.Options{Store: st}),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(hst.WebSocketHandler(nil))
	t.Cleanup(func() {
		hst.Close()
		srv.Close()
	})
	h := &harness{t: t, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
	steps := []struct {
		args []string
		code int
		out  []string // substrings of stdout
		err  []string // substrings of stderr
	}{
		{[]string{"automations"}, exitOK, nil, []string{"no automations"}},
		{[]string{"automations", "create", "--cron", "0 9 * * 1-5", "--tz", "Europe/Berlin", "--id", "weekday", "Standup", "summarize yesterday"}, exitOK, []string{"weekday"}, nil},
		{[]string{"automations", "create", "--cron", "0 9 * *", "Bad", "x"}, exitRejected, nil, []string{"five fields"}},
		{[]string{"automations", "create", "--cron", "0 9 * * *", "--tz", "Nowhere/Else", "Bad", "x"}, exitRejected, nil, []string{"unknown time zone"}},
		{[]string{"automations", "list"}, exitOK, []string{"weekday", "enabled", "0 9 * * 1-5 Europe/Berlin", "Standup"}, nil},
		{[]string{"automations", "show", "week"}, exitOK, []string{"Standup (weekday)", "summarize yesterday", "next run:"}, nil},
		{[]string{"automations", "run", "--wait", "weekday"}, exitOK, []string{"ahp-automation-run:/", "completed", "session "}, nil},
		{[]string{"automations", "runs", "weekday"}, exitOK, []string{"completed", "manual"}, nil},
		// More runs than a page (ten more): runs fetches them all.
		{[]string{"--json", "automations", "runs", "weekday"}, exitOK, nil, nil},
		{[]string{"automations", "disable", "weekday"}, exitOK, nil, []string{"disabled weekday"}},
		{[]string{"automations", "list"}, exitOK, []string{"disabled"}, nil},
		{[]string{"automations", "enable", "weekday"}, exitOK, nil, []string{"enabled weekday"}},
		{[]string{"automations", "run", "nope"}, exitNotFound, nil, []string{"no such automation"}},
		{[]string{"automations", "frobnicate"}, exitUsage, nil, []string{"unknown automations command"}},
		{[]string{"automations", "rm", "weekday"}, exitOK, nil, []string{"removed weekday"}},
		{[]string{"automations", "list"}, exitOK, nil, []string{"no automations"}},
	}
	for i, s := range steps {
		if s.args[0] == "--json" {
			for range 10 {
				if r := h.cmd("", "automations", "run", "--wait", "weekday").run(t); r.code != exitOK {
					t.Fatalf("run %d: %+v", i, r)
				}
			}
		}
		r := h.cmd("", s.args...).run(t)
		if s.args[0] == "--json" && s.args[2] == "runs" {
			if n := strings.Count(r.stdout, "\n"); n != 11 {
				t.Errorf("runs --json printed %d runs, want all 11", n)
			}
		}
		if r.code != s.code {
			t.Fatalf("ahp %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(s.args, " "), r.code, s.code, r.stdout, r.stderr)
		}
		for _, want := range s.out {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("ahp %s: stdout %q lacks %q", strings.Join(s.args, " "), r.stdout, want)
			}
		}
		for _, want := range s.err {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("ahp %s: stderr %q lacks %q", strings.Join(s.args, " "), r.stderr, want)
			}
		}
	}

	// A host without automations.
	plain := newHarness(t, nil)
	r := plain.cmd("", "automations").run(t)
	if r.code == exitOK || !strings.Contains(r.stderr, "serves no automations") {
		t.Errorf("on a host without automations: exit %d, %q", r.code, r.stderr)
	}
}
