package automation_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/automation"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// stores are the stores the scheduler tests run on.
var stores = []struct {
	name string
	open func(t *testing.T, dir string) store.Store
}{
	{"memory", func(t *testing.T, dir string) store.Store { return store.NewMemory() }},
	{"sqlite", func(t *testing.T, dir string) store.Store {
		st, err := sqlite.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
}

func newHost(t *testing.T, st store.Store) *host.Host {
	t.Helper()
	h, err := host.New(&host.Options{
		Store:       st,
		Agents:      []agent.Backend{echo.New(&echo.Options{WordDelay: -1})},
		Automations: automation.Plug(&automation.Options{Store: st}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func initialize(t *testing.T, c *hosttest.Client, subs ...string) *protocol.InitializeResult {
	t.Helper()
	var res protocol.InitializeResult
	c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{"1.1.0"}, ClientID: c.ID, InitialSubscriptions: subs}, &res)
	return &res
}

func definition(expr, zone string) protocol.AutomationDefinition {
	d := protocol.AutomationDefinition{
		Title:    "nightly",
		Message:  protocol.Message{Text: "summarize", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindAutomation}},
		Enabled:  true,
		Triggers: []protocol.AutomationTrigger{},
	}
	if expr != "" {
		d.Triggers = append(d.Triggers, &protocol.AutomationScheduleTrigger{ID: "s", Schedule: protocol.AutomationSchedule{Expression: expr, TimeZone: zone}})
	}
	return d
}

// entry returns the automation's entry in the catalogue as the host holds
// it, or nil.
func entry(h *host.Host, uri string) *protocol.AutomationEntry {
	st, _ := h.State(protocol.AutomationsURI).(*protocol.AutomationState)
	if st == nil {
		return nil
	}
	for i := range st.Entries {
		if st.Entries[i].Resource == uri {
			return &st.Entries[i]
		}
	}
	return nil
}

// ended counts the automation's runs by outcome.
func ended(e *protocol.AutomationEntry) (completed, failed int) {
	for _, r := range e.Runs {
		switch r.Lifecycle.(type) {
		case *protocol.AutomationCompletedRunLifecycle:
			completed++
		case *protocol.AutomationFailedRunLifecycle:
			failed++
		}
	}
	return
}

// create dispatches automation/createRequested and waits for the host's
// automation/set.
func create(t *testing.T, c *hosttest.Client, uri string, d protocol.AutomationDefinition) {
	t.Helper()
	c.Dispatch(protocol.AutomationsURI, &protocol.AutomationCreateRequestedAction{Resource: uri, Definition: d})
	c.WaitFor("automation/set of "+uri, func(envs []protocol.ActionEnvelope) bool {
		for _, e := range envs {
			if a, ok := e.Action.(*protocol.AutomationSetAction); ok && a.Automation.Resource == uri {
				return true
			}
		}
		return false
	})
}

// TestScheduleRunsWithNoClient: an automation due every minute runs twice
// with no client connected, each run a session with the automation's
// message whose turn completes; the host restarts on the same store and
// the schedule resumes.
func TestScheduleRunsWithNoClient(t *testing.T) {
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) {
				st := sc.open(t, dir)
				defer st.Close()
				const uri = "ahp-automation:/every-minute"
				h := newHost(t, st)
				srv := hosttest.ServePipe(t, h)
				c := srv.Dial(t, "author")
				res := initialize(t, c, protocol.AutomationsURI)
				if res.Automations == nil || res.Automations.Create == nil || res.Automations.Schedules == nil {
					t.Fatalf("initialize advertises automations %+v", res.Automations)
				}
				create(t, c, uri, definition("* * * * *", "Europe/Berlin"))
				c.RPC.Close()
				synctest.Wait()

				time.Sleep(2*time.Minute + time.Second)
				synctest.Wait()
				e := entry(h, uri)
				if done, failed := ended(e); done != 2 || failed != 0 {
					t.Fatalf("after two minutes: %d runs completed, %d failed, want 2 and 0: %+v", done, failed, e.Runs)
				}
				for _, r := range e.Runs {
					o, ok := r.Origin.(*protocol.AutomationTriggeredRunOrigin)
					if !ok || o.TriggerID != "s" || o.ScheduledFor == nil || o.CatchUp != nil {
						t.Errorf("run origin %#v, want trigger s with scheduledFor and no catch-up", r.Origin)
					}
					if r.PrimarySession == nil || r.SessionCount != 1 {
						t.Fatalf("run %s has no session", r.Resource)
					}
					sess, _ := h.State(*r.PrimarySession).(*protocol.SessionState)
					if sess == nil {
						t.Fatalf("run %s: no session %s", r.Resource, *r.PrimarySession)
					}
					if o, ok := sess.Origin.(*protocol.AutomationSessionOrigin); !ok || o.Automation != uri || o.Run != r.Resource {
						t.Errorf("session origin %#v", sess.Origin)
					}
					chat, _ := h.State(*sess.DefaultChat).(*protocol.ChatState)
					if chat == nil || len(chat.Turns) != 1 || chat.Turns[0].Message.Text != "summarize" || chat.Turns[0].Message.Origin.Kind != protocol.MessageKindAutomation {
						t.Errorf("run %s: the chat does not hold the automation's completed turn: %+v", r.Resource, chat)
					}
				}
				if err := h.Close(); err != nil {
					t.Fatal(err)
				}

				// Restarted on the same store at once: nothing was missed,
				// the schedule resumes.
				h2 := newHost(t, st)
				hosttest.ServePipe(t, h2)
				if e := entry(h2, uri); e == nil || len(e.Runs) != 2 || e.NextRunAt == nil {
					t.Fatalf("after the restart the catalogue holds %+v", e)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				e = entry(h2, uri)
				if done, _ := ended(e); done != 3 {
					t.Fatalf("a minute after the restart: %d runs completed, want 3: %+v", done, e.Runs)
				}
				for _, r := range e.Runs {
					if o := r.Origin.(*protocol.AutomationTriggeredRunOrigin); o.CatchUp != nil {
						t.Errorf("run %s is a catch-up run", r.Resource)
					}
				}
				h2.Close()
			})
		})
	}
}

// TestMissedWhileDown: occurrences missed while the host was down give
// one catch-up run with misfirePolicy runOnce (the default) and none with
// skip; the schedule then goes on.
func TestMissedWhileDown(t *testing.T) {
	for _, policy := range []protocol.AutomationMisfirePolicy{protocol.AutomationMisfirePolicyRunOnce, protocol.AutomationMisfirePolicySkip} {
		t.Run(string(policy), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := store.NewMemory()
				const uri = "ahp-automation:/hourly"
				h := newHost(t, st)
				srv := hosttest.ServePipe(t, h)
				c := srv.Dial(t, "author")
				initialize(t, c, protocol.AutomationsURI)
				d := definition("0 * * * *", "UTC")
				d.Triggers[0].(*protocol.AutomationScheduleTrigger).MisfirePolicy = &policy
				create(t, c, uri, d)
				h.Close()

				time.Sleep(5 * time.Hour) // down: five occurrences missed
				h2 := newHost(t, st)
				hosttest.ServePipe(t, h2)
				synctest.Wait()
				e := entry(h2, uri)
				catchUp := 0
				for _, r := range e.Runs {
					if o := r.Origin.(*protocol.AutomationTriggeredRunOrigin); o.CatchUp != nil && *o.CatchUp {
						catchUp++
					}
				}
				want := 1
				if policy == protocol.AutomationMisfirePolicySkip {
					want = 0
				}
				if catchUp != want || len(e.Runs) != want {
					t.Fatalf("%d catch-up runs of %d, want %d", catchUp, len(e.Runs), want)
				}
				time.Sleep(time.Hour)
				synctest.Wait()
				if e := entry(h2, uri); len(e.Runs) != want+1 {
					t.Fatalf("an hour later %d runs, want %d", len(e.Runs), want+1)
				}
				h2.Close()
			})
		})
	}
}

// TestRunAutomationIdempotent: runAutomation with the same requestId
// answers the same run, another requestId makes another; manual runs need
// no schedule and happen while the automation is disabled.
func TestRunAutomationIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.NewMemory()
		h := newHost(t, st)
		srv := hosttest.ServePipe(t, h)
		c := srv.Dial(t, "c")
		initialize(t, c, protocol.AutomationsURI)
		const uri = "ahp-automation:/manual"
		d := definition("", "")
		d.Enabled = false
		create(t, c, uri, d)
		run := func(req string) string {
			var res protocol.RunAutomationResult
			c.Must("runAutomation", &protocol.RunAutomationParams{Automation: uri, RequestID: req}, &res)
			return res.Resource
		}
		a, b, other := run("r1"), run("r1"), run("r2")
		if a != b || a == other || !strings.HasPrefix(a, "ahp-automation-run:/") {
			t.Fatalf("runs %q, %q (same requestId) and %q", a, b, other)
		}
		synctest.Wait()
		e := entry(h, uri)
		if done, _ := ended(e); done != 2 || len(e.Runs) != 2 {
			t.Fatalf("runs %+v, want two completed", e.Runs)
		}
		if _, ok := e.Runs[0].Origin.(*protocol.AutomationManualRunOrigin); !ok {
			t.Errorf("origin %#v, want manual", e.Runs[0].Origin)
		}
		var sub protocol.SubscribeResult
		c.Must("subscribe", &protocol.SubscribeParams{Channel: a}, &sub)
		rs := sub.Snapshot.State.(*protocol.AutomationRunState)
		if _, ok := rs.Lifecycle.(*protocol.AutomationCompletedRunLifecycle); !ok || len(rs.Sessions) != 1 {
			t.Errorf("run state %+v", rs)
		}
		if err := c.Call("runAutomation", &protocol.RunAutomationParams{Automation: "ahp-automation:/none", RequestID: "x"}, nil); code(err) != protocol.CodeNotFound {
			t.Errorf("runAutomation of an unknown automation: %v", err)
		}
		if err := c.Call("runAutomation", &protocol.RunAutomationParams{Automation: uri}, nil); code(err) != protocol.CodeInvalidParams {
			t.Errorf("runAutomation without a requestId: %v", err)
		}
		var list protocol.ListAutomationTriggerDefinitionsResult
		c.Must("listAutomationTriggerDefinitions", &protocol.ListAutomationTriggerDefinitionsParams{}, &list)
		if list.Items == nil || len(list.Items) != 0 {
			t.Errorf("trigger definitions %+v, want an empty list", list.Items)
		}
		c.Must("fetchAutomationRuns", &protocol.FetchAutomationRunsParams{Automation: uri}, nil)

		// The request id is kept with the run: a retry after a restart
		// answers the same run.
		h.Close()
		h2 := newHost(t, st)
		c2 := hosttest.ServePipe(t, h2).Dial(t, "c")
		initialize(t, c2)
		var again protocol.RunAutomationResult
		c2.Must("runAutomation", &protocol.RunAutomationParams{Automation: uri, RequestID: "r1"}, &again)
		if again.Resource != a {
			t.Errorf("after a restart requestId r1 answered %s, not %s", again.Resource, a)
		}
		h2.Close()
	})
}

func code(err error) protocol.ErrorCode {
	var e *protocol.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// TestBadDefinitionsRejected: a definition the host cannot run is
// rejected with a reason and leaves the catalogue unchanged.
func TestBadDefinitionsRejected(t *testing.T) {
	withTrigger := func(tr protocol.AutomationTrigger) protocol.AutomationDefinition {
		d := definition("", "")
		d.Triggers = []protocol.AutomationTrigger{tr}
		return d
	}
	sched := func(expr, zone string) protocol.AutomationDefinition { return definition(expr, zone) }
	userMsg := definition("", "")
	userMsg.Message.Origin.Kind = protocol.MessageKindUser
	dup := definition("* * * * *", "UTC")
	dup.Triggers = append(dup.Triggers, dup.Triggers[0])
	conds := definition("", "")
	conds.DisableConditions = []protocol.AutomationDisableCondition{&protocol.AutomationAfterRunsCondition{Max: 1}, &protocol.AutomationAfterRunsCondition{Max: 2}}
	tests := []struct {
		name     string
		resource string
		def      protocol.AutomationDefinition
		reason   string
	}{
		{"six fields", "ahp-automation:/a", sched("0 * * * * *", "UTC"), "exactly five fields"},
		{"minute out of range", "ahp-automation:/a", sched("60 * * * *", "UTC"), "outside 0-59"},
		{"step on a value", "ahp-automation:/a", sched("5/15 * * * *", "UTC"), "a step applies to"},
		{"zero step", "ahp-automation:/a", sched("*/0 * * * *", "UTC"), "positive integer"},
		{"macro", "ahp-automation:/a", sched("@daily", "UTC"), "five fields"},
		{"quartz", "ahp-automation:/a", sched("0 0 ? * MON", "UTC"), "day of month"},
		{"unknown zone", "ahp-automation:/a", sched("0 9 * * 1-5", "Mars/Olympus_Mons"), "unknown time zone"},
		{"no zone", "ahp-automation:/a", sched("0 9 * * 1-5", ""), "timeZone is empty"},
		{"event trigger", "ahp-automation:/a", withTrigger(&protocol.AutomationEventTrigger{ID: "e", Type: "push", Title: "Push", Events: []protocol.AutomationTriggerEventDefinition{}}), "no event trigger"},
		{"duplicate trigger ids", "ahp-automation:/a", dup, "two triggers"},
		{"duplicate condition kinds", "ahp-automation:/a", conds, "appears twice"},
		{"user message", "ahp-automation:/a", userMsg, "origin kind"},
		{"bad resource", "ahp-session:/a", definition("", ""), "ahp-automation:/<id>"},
	}
	synctest.Test(t, func(t *testing.T) {
		h := newHost(t, store.NewMemory())
		srv := hosttest.ServePipe(t, h)
		c := srv.Dial(t, "c")
		initialize(t, c, protocol.AutomationsURI)
		for _, tc := range tests {
			seq := c.Dispatch(protocol.AutomationsURI, &protocol.AutomationCreateRequestedAction{Resource: tc.resource, Definition: tc.def})
			envs := c.WaitFor(tc.name+": rejection", func(envs []protocol.ActionEnvelope) bool {
				for _, e := range envs {
					if e.Origin != nil && e.Origin.ClientSeq == seq && e.RejectionReason != nil {
						return true
					}
				}
				return false
			})
			for _, e := range envs {
				if e.Origin != nil && e.Origin.ClientSeq == seq && e.RejectionReason != nil && !strings.Contains(*e.RejectionReason, tc.reason) {
					t.Errorf("%s: rejected with %q, want it to say %q", tc.name, *e.RejectionReason, tc.reason)
				}
			}
		}
		if st := h.State(protocol.AutomationsURI).(*protocol.AutomationState); len(st.Entries) != 0 {
			t.Errorf("the catalogue holds %+v", st.Entries)
		}
		// Sunday as 7 and names are the grammar's; this one is accepted.
		create(t, c, "ahp-automation:/ok", definition("0 9 * jan-dec MON-FRI,7", "Europe/Berlin"))
		if e := entry(h, "ahp-automation:/ok"); e == nil || e.NextRunAt == nil {
			t.Fatalf("the valid automation is not scheduled: %+v", e)
		}
	})
}

// TestUpdateDisableRemove: updates replace the fields they name, disabling
// stops the schedule, and removal deletes the automation and its runs.
func TestUpdateDisableRemove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.NewMemory()
		h := newHost(t, st)
		srv := hosttest.ServePipe(t, h)
		c := srv.Dial(t, "c")
		initialize(t, c, protocol.AutomationsURI)
		const uri = "ahp-automation:/u"
		create(t, c, uri, definition("* * * * *", "UTC"))
		c.Dispatch(protocol.AutomationsURI, &protocol.AutomationUpdateRequestedAction{Resource: uri, Changes: protocol.AutomationDefinitionPatch{Enabled: protocol.Ptr(false), Title: protocol.Ptr("renamed")}})
		synctest.Wait()
		e := entry(h, uri)
		if e.Definition.Enabled || e.Definition.Title != "renamed" || e.NextRunAt != nil {
			t.Fatalf("after the update: %+v", e)
		}
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		if e := entry(h, uri); len(e.Runs) != 0 {
			t.Fatalf("a disabled automation ran: %+v", e.Runs)
		}
		var res protocol.RunAutomationResult
		c.Must("runAutomation", &protocol.RunAutomationParams{Automation: uri, RequestID: "m"}, &res)
		synctest.Wait()
		c.Dispatch(protocol.AutomationsURI, &protocol.AutomationRemovedAction{Resource: uri})
		synctest.Wait()
		if entry(h, uri) != nil || h.State(res.Resource) != nil {
			t.Fatalf("the removed automation or its run is still there")
		}
		recs, err := st.Records(context.Background(), "automationRun")
		if err != nil || len(recs) != 0 {
			t.Fatalf("run records left: %v %v", recs, err)
		}
		h.Close()
		h2 := newHost(t, st)
		hosttest.ServePipe(t, h2)
		if entry(h2, uri) != nil {
			t.Fatal("the removed automation came back after a restart")
		}
	})
}

// TestRunOutcomes: a run whose turn fails is recorded failed with the
// turn's error; a run still going when the host stops is recorded failed
// (interrupted), and stays so after a restart.
func TestRunOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.NewMemory()
		h := newHost(t, st)
		srv := hosttest.ServePipe(t, h)
		c := srv.Dial(t, "c")
		initialize(t, c, protocol.AutomationsURI)
		failing, slow := definition("", ""), definition("", "")
		failing.Message.Text = "/error"
		slow.Message.Text = "/slow 100000"
		create(t, c, "ahp-automation:/failing", failing)
		create(t, c, "ahp-automation:/slow", slow)
		c.Must("runAutomation", &protocol.RunAutomationParams{Automation: "ahp-automation:/failing", RequestID: "1"}, nil)
		c.Must("runAutomation", &protocol.RunAutomationParams{Automation: "ahp-automation:/slow", RequestID: "1"}, nil)
		synctest.Wait()
		e := entry(h, "ahp-automation:/failing")
		f, ok := e.Runs[0].Lifecycle.(*protocol.AutomationFailedRunLifecycle)
		if !ok || f.Error.ErrorType != "turnFailed" || !strings.Contains(f.Error.Message, "on purpose") || f.StartedAt == nil {
			t.Fatalf("the failing run: %#v", e.Runs[0].Lifecycle)
		}
		if _, ok := entry(h, "ahp-automation:/slow").Runs[0].Lifecycle.(*protocol.AutomationRunningRunLifecycle); !ok {
			t.Fatalf("the slow run is not running: %#v", entry(h, "ahp-automation:/slow").Runs[0].Lifecycle)
		}
		h.Close()
		h2 := newHost(t, st)
		hosttest.ServePipe(t, h2)
		f, ok = entry(h2, "ahp-automation:/slow").Runs[0].Lifecycle.(*protocol.AutomationFailedRunLifecycle)
		if !ok || f.Error.ErrorType != "interrupted" {
			t.Fatalf("the run a stop interrupted: %#v", entry(h2, "ahp-automation:/slow").Runs[0].Lifecycle)
		}
		h2.Close()
	})
}

// TestDisableConditions: afterRuns disables the schedule once that many
// scheduled runs were admitted (manual runs do not count), and afterDate
// once the date passes; enabling again starts a fresh allowance.
func TestDisableConditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHost(t, store.NewMemory())
		srv := hosttest.ServePipe(t, h)
		c := srv.Dial(t, "c")
		initialize(t, c, protocol.AutomationsURI)
		runs := definition("* * * * *", "UTC")
		runs.DisableConditions = []protocol.AutomationDisableCondition{&protocol.AutomationAfterRunsCondition{Max: 2}}
		create(t, c, "ahp-automation:/runs", runs)
		dated := definition("* * * * *", "UTC")
		dated.DisableConditions = []protocol.AutomationDisableCondition{&protocol.AutomationAfterDateCondition{Date: protocol.FormatTime(time.Now().Add(150 * time.Second))}}
		create(t, c, "ahp-automation:/dated", dated)
		c.Must("runAutomation", &protocol.RunAutomationParams{Automation: "ahp-automation:/runs", RequestID: "by-hand"}, nil)

		time.Sleep(5 * time.Minute)
		synctest.Wait()
		e := entry(h, "ahp-automation:/runs")
		if e.Definition.Enabled || e.RunCount == nil || *e.RunCount != 2 || len(e.Runs) != 3 || e.NextRunAt != nil {
			t.Fatalf("afterRuns 2: enabled %v, runCount %v, %d runs, next %v", e.Definition.Enabled, e.RunCount, len(e.Runs), e.NextRunAt)
		}
		d := entry(h, "ahp-automation:/dated")
		if d.Definition.Enabled || len(d.Runs) != 2 {
			t.Fatalf("afterDate in 150 s: enabled %v, %d runs", d.Definition.Enabled, len(d.Runs))
		}

		c.Dispatch(protocol.AutomationsURI, &protocol.AutomationUpdateRequestedAction{Resource: "ahp-automation:/runs", Changes: protocol.AutomationDefinitionPatch{Enabled: protocol.Ptr(true)}})
		synctest.Wait()
		if e := entry(h, "ahp-automation:/runs"); !e.Definition.Enabled || e.RunCount == nil || *e.RunCount != 0 {
			t.Fatalf("enabled again: enabled %v, runCount %v", e.Definition.Enabled, e.RunCount)
		}
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		if e := entry(h, "ahp-automation:/runs"); e.Definition.Enabled || len(e.Runs) != 5 {
			t.Fatalf("the fresh allowance: enabled %v, %d runs", e.Definition.Enabled, len(e.Runs))
		}
	})
}

// failingStore fails writes while failing is set.
type failingStore struct {
	*store.Memory
	failing atomic.Bool
}

func (f *failingStore) Write(ctx context.Context, b store.Batch) error {
	if f.failing.Load() {
		return errors.New("disk on fire")
	}
	return f.Memory.Write(ctx, b)
}

// TestRunNotSaved: a manual run the store cannot save is refused with an
// internal error and does not start: it is recorded failed; a retry with
// the same requestId after the store recovers answers that run.
func TestRunNotSaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := &failingStore{Memory: store.NewMemory()}
		h, err := host.New(&host.Options{
			Agents:      []agent.Backend{echo.New(&echo.Options{WordDelay: -1})},
			Automations: automation.Plug(&automation.Options{Store: fs}),
		})
		if err != nil {
			t.Fatal(err)
		}
		srv := hosttest.ServePipe(t, h)
		c := srv.Dial(t, "c")
		initialize(t, c, protocol.AutomationsURI)
		const uri = "ahp-automation:/a"
		create(t, c, uri, definition("", ""))
		fs.failing.Store(true)
		err = c.Call("runAutomation", &protocol.RunAutomationParams{Automation: uri, RequestID: "r"}, nil)
		if code(err) != protocol.CodeInternalError || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("runAutomation on a failing store: %v", err)
		}
		fs.failing.Store(false)
		synctest.Wait()
		e := entry(h, uri)
		if len(e.Runs) != 1 || e.Runs[0].SessionCount != 0 {
			t.Fatalf("runs %+v", e.Runs)
		}
		f, ok := e.Runs[0].Lifecycle.(*protocol.AutomationFailedRunLifecycle)
		if !ok || f.Error.ErrorType != "storageError" || f.StartedAt != nil {
			t.Fatalf("lifecycle %#v", e.Runs[0].Lifecycle)
		}
		var res protocol.RunAutomationResult
		c.Must("runAutomation", &protocol.RunAutomationParams{Automation: uri, RequestID: "r"}, &res)
		if res.Resource != e.Runs[0].Resource {
			t.Errorf("the retry answered %s, not %s", res.Resource, e.Runs[0].Resource)
		}
	})
}

// TestFetchAutomationRuns: an entry shows the newest page of runs with a
// cursor to the older ones; fetchAutomationRuns adds a page to the entry
// every subscriber sees, until none is left; a cursor naming no run is
// refused.
func TestFetchAutomationRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHost(t, store.NewMemory())
		srv := hosttest.ServePipe(t, h)
		c := srv.Dial(t, "c")
		initialize(t, c, protocol.AutomationsURI)
		const uri = "ahp-automation:/paged"
		create(t, c, uri, definition("", ""))
		for i := range automation.RunsPage + 3 {
			c.Must("runAutomation", &protocol.RunAutomationParams{Automation: uri, RequestID: fmt.Sprint(i)}, nil)
			synctest.Wait()
		}
		e := entry(h, uri)
		if len(e.Runs) != automation.RunsPage || e.RunsNextCursor == nil || *e.RunsNextCursor != e.Runs[len(e.Runs)-1].Resource {
			t.Fatalf("first page: %d runs, cursor %v", len(e.Runs), e.RunsNextCursor)
		}
		newest := e.Runs[0].Resource
		if err := c.Call("fetchAutomationRuns", &protocol.FetchAutomationRunsParams{Automation: uri, Cursor: protocol.Ptr("ahp-automation-run:/none")}, nil); code(err) != protocol.CodeInvalidParams {
			t.Errorf("a cursor naming no run: %v", err)
		}
		c.Must("fetchAutomationRuns", &protocol.FetchAutomationRunsParams{Automation: uri, Cursor: e.RunsNextCursor}, nil)
		synctest.Wait()
		e = entry(h, uri)
		if len(e.Runs) != automation.RunsPage+3 || e.RunsNextCursor != nil || e.Runs[0].Resource != newest {
			t.Fatalf("after fetching: %d runs, cursor %v", len(e.Runs), e.RunsNextCursor)
		}
		c.Must("fetchAutomationRuns", &protocol.FetchAutomationRunsParams{Automation: uri}, nil)
		if err := c.Call("fetchAutomationRuns", &protocol.FetchAutomationRunsParams{Automation: "ahp-automation:/none"}, nil); code(err) != protocol.CodeNotFound {
			t.Errorf("an unknown automation: %v", err)
		}
	})
}

// broken is an agent that never starts.
type broken struct{}

func (broken) Info() protocol.AgentInfo {
	return protocol.AgentInfo{Provider: "broken", DisplayName: "Broken", Models: []protocol.SessionModelInfo{}}
}
func (broken) Open(context.Context, agent.OpenRequest, agent.Host) (agent.Session, error) {
	return nil, errors.New("no such binary")
}
func (broken) Close() error { return nil }

// TestRunFailures: a run fails with a reason when its provider is
// unknown, when its agent does not start, and when its session is
// disposed while the turn runs.
func TestRunFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.NewMemory()
		h, err := host.New(&host.Options{
			Store:       st,
			Agents:      []agent.Backend{echo.New(&echo.Options{WordDelay: -1}), broken{}},
			Automations: automation.Plug(&automation.Options{Store: st}),
		})
		if err != nil {
			t.Fatal(err)
		}
		srv := hosttest.ServePipe(t, h)
		c := srv.Dial(t, "c")
		initialize(t, c, protocol.AutomationsURI)
		withProvider := func(p string) protocol.AutomationDefinition {
			d := definition("", "")
			d.Session.Provider = &p
			return d
		}
		slow := definition("", "")
		slow.Message.Text = "/slow 100000"
		create(t, c, "ahp-automation:/unknown", withProvider("nobody"))
		create(t, c, "ahp-automation:/broken", withProvider("broken"))
		create(t, c, "ahp-automation:/disposed", slow)
		for _, a := range []string{"unknown", "broken", "disposed"} {
			c.Must("runAutomation", &protocol.RunAutomationParams{Automation: "ahp-automation:/" + a, RequestID: "1"}, nil)
		}
		synctest.Wait()
		running := entry(h, "ahp-automation:/disposed").Runs[0]
		if _, ok := running.Lifecycle.(*protocol.AutomationRunningRunLifecycle); !ok || running.PrimarySession == nil {
			t.Fatalf("the slow run: %#v", running)
		}
		c.Must("disposeSession", &protocol.DisposeSessionParams{Channel: *running.PrimarySession}, nil)
		synctest.Wait()
		for _, tc := range []struct{ automation, errType, says string }{
			{"unknown", "sessionFailed", "nobody"},
			{"broken", "", "no such binary"},
			{"disposed", "turnFailed", "disposed"},
		} {
			r := entry(h, "ahp-automation:/"+tc.automation).Runs[0]
			f, ok := r.Lifecycle.(*protocol.AutomationFailedRunLifecycle)
			// The agent fails to start before or after the first message
			// is sent: the run's session, or its turn, failed.
			if !ok || (tc.errType != "" && f.Error.ErrorType != tc.errType) || !strings.Contains(f.Error.Message, tc.says) {
				t.Errorf("%s: %#v", tc.automation, r.Lifecycle)
			}
		}
	})
}

// TestRunTimeout: a run whose turn is still going after RunTimeout fails.
func TestRunTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := store.NewMemory()
		h, err := host.New(&host.Options{
			Store:       st,
			Agents:      []agent.Backend{echo.New(&echo.Options{WordDelay: -1, SlowDelay: time.Second})},
			Automations: automation.Plug(&automation.Options{Store: st, RunTimeout: time.Minute}),
		})
		if err != nil {
			t.Fatal(err)
		}
		srv := hosttest.ServePipe(t, h)
		c := srv.Dial(t, "c")
		initialize(t, c, protocol.AutomationsURI)
		d := definition("", "")
		d.Message.Text = "/slow 1000"
		create(t, c, "ahp-automation:/long", d)
		c.Must("runAutomation", &protocol.RunAutomationParams{Automation: "ahp-automation:/long", RequestID: "1"}, nil)
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if _, ok := entry(h, "ahp-automation:/long").Runs[0].Lifecycle.(*protocol.AutomationRunningRunLifecycle); !ok {
			t.Fatal("the run ended before its timeout")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		f, ok := entry(h, "ahp-automation:/long").Runs[0].Lifecycle.(*protocol.AutomationFailedRunLifecycle)
		if !ok || f.Error.ErrorType != "timeout" {
			t.Fatalf("after the timeout: %#v", entry(h, "ahp-automation:/long").Runs[0].Lifecycle)
		}
	})
}
