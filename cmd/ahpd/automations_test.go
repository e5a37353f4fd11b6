package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wire is a client that speaks raw JSON-RPC over a real WebSocket, as an
// outside implementation would: it knows the wire, not this module's
// types.
type wire struct {
	t   *testing.T
	ws  *websocket.Conn
	id  int
	got []map[string]any // notifications read while waiting for answers
}

func dialWire(t *testing.T, url string) *wire {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(16 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &wire{t: t, ws: ws}
}

func (w *wire) send(msg map[string]any) {
	w.t.Helper()
	b, _ := json.Marshal(msg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.ws.Write(ctx, websocket.MessageText, b); err != nil {
		w.t.Fatal(err)
	}
}

func (w *wire) read() map[string]any {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, b, err := w.ws.Read(ctx)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		w.t.Fatalf("%s: %v", b, err)
	}
	return m
}

// call sends a request and returns its result, or its error object.
func (w *wire) call(method string, params any) (result, rpcErr map[string]any) {
	w.t.Helper()
	w.id++
	id := w.id
	w.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for {
		m := w.read()
		if m["id"] == nil {
			w.got = append(w.got, m)
			continue
		}
		if int(m["id"].(float64)) != id {
			continue
		}
		if e, ok := m["error"].(map[string]any); ok {
			return nil, e
		}
		r, _ := m["result"].(map[string]any)
		return r, nil
	}
}

// action waits for an action notification matching ok.
func (w *wire) action(what string, ok func(env map[string]any, action map[string]any) bool) map[string]any {
	w.t.Helper()
	check := func(m map[string]any) bool {
		if m["method"] != "action" {
			return false
		}
		env, _ := m["params"].(map[string]any)
		a, _ := env["action"].(map[string]any)
		return env != nil && a != nil && ok(env, a)
	}
	for i, m := range w.got {
		if check(m) {
			w.got = append(w.got[:i:i], w.got[i+1:]...)
			return m["params"].(map[string]any)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		m := w.read()
		if check(m) {
			return m["params"].(map[string]any)
		}
		w.got = append(w.got, m)
	}
	w.t.Fatalf("no action: %s", what)
	return nil
}

// TestAutomationsConformance drives ahpd's automations over a real
// WebSocket with JSON only: initialize advertises them at 1.1.0 and not
// at 0.8.0, the catalogue accepts a definition and rejects a bad cron
// expression and time zone with a reason, runAutomation is idempotent by
// requestId, a run's channel reaches completed with its session, and
// fetchAutomationRuns and listAutomationTriggerDefinitions answer as the
// schema says.
func TestAutomationsConformance(t *testing.T) {
	url := runAhpd(t, "--store", "memory", "--no-token")
	w := dialWire(t, url)
	init, e := w.call("initialize", map[string]any{"protocolVersions": []string{"1.1.0"}, "clientId": "outside", "initialSubscriptions": []string{"ahp-automations://"}})
	if e != nil {
		t.Fatal(e)
	}
	caps, _ := init["automations"].(map[string]any)
	if caps == nil || caps["create"] == nil || caps["schedules"] == nil {
		t.Fatalf("initialize advertises automations %v", init["automations"])
	}
	snaps, _ := init["snapshots"].([]any)
	if len(snaps) != 1 || snaps[0].(map[string]any)["resource"] != "ahp-automations://" {
		t.Fatalf("snapshots %v", snaps)
	}
	def := func(expr, zone string) map[string]any {
		return map[string]any{
			"title":    "conformance",
			"message":  map[string]any{"text": "hello", "origin": map[string]any{"kind": "automation"}},
			"session":  map[string]any{},
			"enabled":  true,
			"triggers": []any{map[string]any{"id": "t", "kind": "schedule", "schedule": map[string]any{"expression": expr, "timeZone": zone}}},
		}
	}
	dispatch := func(seq int, action map[string]any) {
		w.send(map[string]any{"jsonrpc": "2.0", "method": "dispatchAction", "params": map[string]any{"channel": "ahp-automations://", "clientSeq": seq, "action": action}})
	}
	mine := func(seq int) func(env, a map[string]any) bool {
		return func(env, a map[string]any) bool {
			o, _ := env["origin"].(map[string]any)
			return o != nil && o["clientId"] == "outside" && o["clientSeq"] == float64(seq)
		}
	}
	for i, bad := range []struct{ expr, zone, reason string }{
		{"* * * *", "UTC", "five fields"},
		{"0 25 * * *", "UTC", "outside 0-23"},
		{"0 9 * * MON", "Nowhere/Atlantis", "unknown time zone"},
	} {
		seq := 10 + i
		dispatch(seq, map[string]any{"type": "automation/createRequested", "resource": "ahp-automation:/bad", "definition": def(bad.expr, bad.zone)})
		env := w.action("rejection of "+bad.expr, mine(seq))
		if r, _ := env["rejectionReason"].(string); !strings.Contains(r, bad.reason) {
			t.Errorf("%q in %q: rejection %q, want it to say %q", bad.expr, bad.zone, r, bad.reason)
		}
	}
	const uri = "ahp-automation:/conformance"
	dispatch(1, map[string]any{"type": "automation/createRequested", "resource": uri, "definition": def("30 4 * * 1-5", "Europe/Berlin")})
	if env := w.action("the create request's echo", mine(1)); env["rejectionReason"] != nil {
		t.Fatalf("create rejected: %v", env["rejectionReason"])
	}
	set := w.action("automation/set", func(env, a map[string]any) bool { return a["type"] == "automation/set" })
	entry := set["action"].(map[string]any)["automation"].(map[string]any)
	if entry["resource"] != uri || entry["nextRunAt"] == nil || entry["createdAt"] == nil {
		t.Fatalf("entry %v", entry)
	}
	if ops, _ := entry["operations"].([]any); len(ops) != 3 {
		t.Errorf("operations %v", entry["operations"])
	}

	r1, e := w.call("runAutomation", map[string]any{"channel": "ahp-automations://", "automation": uri, "requestId": "req-1"})
	if e != nil {
		t.Fatal(e)
	}
	r2, e := w.call("runAutomation", map[string]any{"channel": "ahp-automations://", "automation": uri, "requestId": "req-1"})
	if e != nil || r1["resource"] != r2["resource"] || !strings.HasPrefix(r1["resource"].(string), "ahp-automation-run:/") {
		t.Fatalf("runAutomation twice with one requestId: %v and %v (%v)", r1, r2, e)
	}
	if _, e := w.call("runAutomation", map[string]any{"channel": "ahp-automations://", "automation": "ahp-automation:/none", "requestId": "x"}); e == nil || e["code"] != float64(-32008) {
		t.Errorf("runAutomation of an unknown automation: %v", e)
	}
	run := r1["resource"].(string)
	w.action("the run completed", func(env, a map[string]any) bool {
		if a["type"] != "automation/set" {
			return false
		}
		runs, _ := a["automation"].(map[string]any)["runs"].([]any)
		for _, r := range runs {
			r := r.(map[string]any)
			if r["resource"] == run && r["lifecycle"].(map[string]any)["status"] == "completed" {
				return r["primarySession"] != nil && r["sessionCount"] == float64(1)
			}
		}
		return false
	})
	sub, e := w.call("subscribe", map[string]any{"channel": run})
	if e != nil {
		t.Fatal(e)
	}
	state := sub["snapshot"].(map[string]any)["state"].(map[string]any)
	if state["automation"] != uri || state["origin"].(map[string]any)["kind"] != "manual" || len(state["sessions"].([]any)) != 1 {
		t.Fatalf("run state %v", state)
	}
	session := state["primarySession"].(string)
	sub, e = w.call("subscribe", map[string]any{"channel": session})
	if e != nil {
		t.Fatal(e)
	}
	origin := sub["snapshot"].(map[string]any)["state"].(map[string]any)["origin"].(map[string]any)
	if origin["kind"] != "automation" || origin["automation"] != uri || origin["run"] != run {
		t.Errorf("the run's session has origin %v", origin)
	}

	if res, e := w.call("fetchAutomationRuns", map[string]any{"channel": "ahp-automations://", "automation": uri}); e != nil || len(res) != 0 {
		t.Errorf("fetchAutomationRuns: %v %v", res, e)
	}
	w.action("automation/set after fetchAutomationRuns", func(env, a map[string]any) bool { return a["type"] == "automation/set" })
	if res, e := w.call("listAutomationTriggerDefinitions", map[string]any{"channel": "ahp-root://"}); e != nil || res["items"] == nil || len(res["items"].([]any)) != 0 {
		t.Errorf("listAutomationTriggerDefinitions: %v %v", res, e)
	}

	// A connection at 0.8.0 sees no automations.
	old := dialWire(t, url)
	init, e = old.call("initialize", map[string]any{"protocolVersions": []string{"0.8.0"}, "clientId": "old"})
	if e != nil || init["automations"] != nil {
		t.Fatalf("initialize at 0.8.0: %v %v", init, e)
	}
	if _, e := old.call("runAutomation", map[string]any{"channel": "ahp-automations://", "automation": uri, "requestId": "req-2"}); e == nil || e["code"] != float64(-32601) {
		t.Errorf("runAutomation at 0.8.0: %v", e)
	}
}
