package automation

import (
	"fmt"
	"slices"
	"time"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
)

// loop is the scheduler: it applies the accepted client actions and
// admits the runs whose schedule came due, then sleeps until the next
// occurrence, the next accepted action or Close.
func (s *Service) loop() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.step()
		s.mu.Lock()
		wake := s.wakeLocked()
		s.mu.Unlock()
		timer.Stop()
		var fire <-chan time.Time
		if !wake.IsZero() {
			timer.Reset(max(time.Until(wake), 0))
			fire = timer.C
		}
		select {
		case <-s.ctx.Done():
			return
		case <-s.kick:
		case <-fire:
		}
	}
}

// wake returns when the scheduler must next look: the earliest pending
// occurrence or afterDate of an enabled automation.
func (s *Service) wakeLocked() time.Time {
	var wake time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (wake.IsZero() || t.Before(wake)) {
			wake = t
		}
	}
	for _, a := range s.autos {
		if !a.entry.Definition.Enabled {
			continue
		}
		for _, t := range a.trigs {
			if t.sched != nil { // a schedule that cannot run never wakes the loop
				earlier(t.next)
			}
		}
		if d := afterDate(&a.entry.Definition); d != "" {
			if tm, err := protocol.ParseTime(d); err == nil {
				earlier(tm.Add(time.Millisecond))
			}
		}
	}
	return wake
}

// step applies the queued client actions, then the due schedules.
func (s *Service) step() {
	s.mu.Lock()
	q := s.queue
	s.queue = nil
	s.mu.Unlock()
	s.preload(q)
	for _, item := range q {
		s.apply(func(ch *change) error {
			s.applyActionLocked(ch, item)
			return nil
		})
	}
	s.apply(func(ch *change) error {
		if s.closed {
			return nil
		}
		nowT := time.Now()
		for _, uri := range s.order {
			s.dueLocked(ch, s.autos[uri], nowT)
		}
		return nil
	})
}

// dueLocked disables a whose afterDate passed and admits the runs of its
// schedule triggers that came due.
func (s *Service) dueLocked(ch *change, a *auto, nowT time.Time) {
	def := &a.entry.Definition
	if !def.Enabled || s.removing[a.entry.Resource] {
		return
	}
	if d := afterDate(def); d != "" {
		if tm, err := protocol.ParseTime(d); err == nil && nowT.After(tm) {
			s.disableLocked(a)
			ch.setLocked(s, a)
			return
		}
	}
	changed := false
	for _, t := range a.trigs {
		if t.next.IsZero() || t.next.After(nowT) || t.sched == nil {
			continue
		}
		// Occurrences due: t.next and any after it up to now.
		latest, count := t.next, 1
		for n := t.sched.next(t.next); !n.IsZero() && !n.After(nowT); n = t.sched.next(n) {
			latest = n
			count++
			if count > 1000 {
				break // a long outage: the count only matters up to 2
			}
		}
		missed := t.missed || count > 1
		t.missed = false
		t.next = t.sched.next(nowT)
		changed = true
		if missed && t.policy == protocol.AutomationMisfirePolicySkip {
			s.log.Info("automation occurrences missed and skipped", "automation", a.entry.Resource, "trigger", t.id, "missed", count)
			continue
		}
		origin := &protocol.AutomationTriggeredRunOrigin{TriggerID: t.id, ScheduledFor: protocol.Ptr(protocol.FormatTime(latest))}
		if missed {
			origin.CatchUp = protocol.Ptr(true)
			s.log.Info("automation catch-up run", "automation", a.entry.Resource, "trigger", t.id, "missed", count)
		}
		if cond := afterRuns(def); cond != nil {
			n := int64(0)
			if a.entry.RunCount != nil {
				n = int64(*a.entry.RunCount)
			}
			n++
			a.entry.RunCount = protocol.Ptr(float64(n))
			if n >= cond.Max {
				s.disableLocked(a)
			}
		}
		s.setNextRunAt(a)
		s.admitLocked(ch, a, origin, "")
		if !def.Enabled {
			break
		}
	}
	if changed {
		s.setNextRunAt(a)
		ch.setLocked(s, a)
	}
}

// disableLocked turns a's schedules off.
func (s *Service) disableLocked(a *auto) {
	a.entry.Definition.Enabled = false
	for _, t := range a.trigs {
		t.next, t.missed = time.Time{}, false
	}
	s.setNextRunAt(a)
}

// setTriggers rebuilds a's schedule triggers from its definition; the
// next occurrences are left zero.
func (s *Service) setTriggers(a *auto) {
	a.trigs = nil
	for _, tr := range a.entry.Definition.Triggers {
		st, ok := tr.(*protocol.AutomationScheduleTrigger)
		if !ok {
			continue
		}
		t := &trigger{id: st.ID, zone: st.Schedule.TimeZone, policy: protocol.AutomationMisfirePolicyRunOnce}
		if st.MisfirePolicy != nil {
			t.policy = *st.MisfirePolicy
		}
		norm, err := normalizeCron(st.Schedule.Expression)
		if err == nil {
			var loc *time.Location
			if loc, err = s.location(t.zone); err == nil {
				t.norm = norm
				t.sched, err = newSchedule(norm, loc)
			}
		}
		if err != nil {
			s.log.Warn("an automation's schedule cannot run", "automation", a.entry.Resource, "trigger", t.id, "err", err)
		}
		a.trigs = append(a.trigs, t)
	}
}

// location returns a time zone, loaded once. A zone not preloaded
// (preload, New) is read here.
func (s *Service) location(name string) (*time.Location, error) {
	if loc := s.locs[name]; loc != nil {
		return loc, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w", name, err)
	}
	s.locs[name] = loc
	return loc, nil
}

// restartLocked computes every trigger's next occurrence from now.
func (s *Service) restartLocked(a *auto, nowT time.Time) {
	for _, t := range a.trigs {
		t.next, t.missed = time.Time{}, false
		if a.entry.Definition.Enabled && t.sched != nil {
			t.next = t.sched.next(nowT)
		}
	}
	s.setNextRunAt(a)
}

// setNextRunAt sets the entry's nextRunAt from its triggers.
func (s *Service) setNextRunAt(a *auto) {
	var next time.Time
	if a.entry.Definition.Enabled {
		for _, t := range a.trigs {
			if !t.next.IsZero() && (next.IsZero() || t.next.Before(next)) {
				next = t.next
			}
		}
	}
	a.entry.NextRunAt = nil
	if !next.IsZero() {
		a.entry.NextRunAt = protocol.Ptr(protocol.FormatTime(next))
	}
}

// applyActionLocked applies an accepted catalogue action.
func (s *Service) applyActionLocked(ch *change, q queued) {
	nowT := time.Now()
	switch act := q.action.(type) {
	case *protocol.AutomationCreateRequestedAction:
		delete(s.reserved, act.Resource)
		if s.autos[act.Resource] != nil {
			return
		}
		at := protocol.FormatTime(nowT)
		a := &auto{entry: protocol.AutomationEntry{Resource: act.Resource, Definition: act.Definition, CreatedAt: at, ModifiedAt: at}, window: RunsPage}
		if afterRuns(&a.entry.Definition) != nil {
			a.entry.RunCount = protocol.Ptr(0.0)
		}
		s.setTriggers(a)
		s.restartLocked(a, nowT)
		s.autos[act.Resource] = a
		s.order = append(s.order, act.Resource)
		ch.setLocked(s, a)
		s.log.Info("automation created", "automation", act.Resource, "client", q.client)
	case *protocol.AutomationUpdateRequestedAction:
		a := s.autos[act.Resource]
		if a == nil {
			return
		}
		def := &a.entry.Definition
		c := act.Changes
		wasEnabled, hadRuns := def.Enabled, afterRuns(def) != nil
		if c.Title != nil {
			def.Title = *c.Title
		}
		if c.Message != nil {
			def.Message = *c.Message
		}
		if c.Session != nil {
			def.Session = *c.Session
		}
		if c.Enabled != nil {
			def.Enabled = *c.Enabled
		}
		if c.Triggers != nil {
			def.Triggers = c.Triggers
		}
		if c.DisableConditions != nil {
			def.DisableConditions = c.DisableConditions
		}
		if c.Meta != nil {
			def.Meta = c.Meta
		}
		// A fresh afterRuns allowance when the condition appears or the
		// automation is enabled again.
		switch {
		case afterRuns(def) == nil:
			a.entry.RunCount = nil
		case !hadRuns || (!wasEnabled && def.Enabled):
			a.entry.RunCount = protocol.Ptr(0.0)
		}
		if c.Triggers != nil {
			s.setTriggers(a)
		}
		if c.Triggers != nil || wasEnabled != def.Enabled {
			s.restartLocked(a, nowT)
		}
		s.setNextRunAt(a)
		a.entry.ModifiedAt = protocol.FormatTime(nowT)
		ch.setLocked(s, a)
	case *protocol.AutomationRemovedAction:
		delete(s.removing, act.Resource)
		a := s.autos[act.Resource]
		if a == nil {
			return
		}
		delete(s.autos, act.Resource)
		s.order = slices.DeleteFunc(s.order, func(u string) bool { return u == act.Resource })
		ch.ops = append(ch.ops, deleteRecord(kindAutomation, act.Resource))
		for _, r := range a.runs {
			delete(s.runs, r.state.Resource)
			ch.ops = append(ch.ops, deleteRecord(kindRun, r.state.Resource))
			ch.close = append(ch.close, r.state.Resource)
		}
		s.log.Info("automation removed", "automation", act.Resource, "client", q.client)
		// The client's automation/removed already took the entry out of
		// the catalogue.
	}
}

// catalogueOwner is the ChannelOwner of ahp-automations://.
type catalogueOwner struct{ s *Service }

// ValidateAction checks a client's catalogue action with the host locked:
// it reads only memory (time zones were listed at start).
func (o catalogueOwner) ValidateAction(c host.Client, _ protocol.SnapshotState, a protocol.StateAction) string {
	s := o.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "the host is shutting down"
	}
	switch a := a.(type) {
	case *protocol.AutomationCreateRequestedAction:
		if r := checkResource(a.Resource); r != "" {
			return r
		}
		if s.autos[a.Resource] != nil || s.reserved[a.Resource] {
			return fmt.Sprintf("the automation %s already exists", a.Resource)
		}
		return checkDefinition(&a.Definition, s.zones)
	case *protocol.AutomationUpdateRequestedAction:
		cur := s.autos[a.Resource]
		if cur == nil || s.removing[a.Resource] {
			return fmt.Sprintf("no automation %s", a.Resource)
		}
		next := cur.entry.Definition
		c := a.Changes
		if c.Title != nil {
			next.Title = *c.Title
		}
		if c.Message != nil {
			next.Message = *c.Message
		}
		if c.Session != nil {
			next.Session = *c.Session
		}
		if c.Triggers != nil {
			next.Triggers = c.Triggers
		}
		if c.DisableConditions != nil {
			next.DisableConditions = c.DisableConditions
		}
		return checkDefinition(&next, s.zones)
	case *protocol.AutomationRemovedAction:
		// Removing an unknown resource is a no-op.
		return ""
	}
	return fmt.Sprintf("%s is not an action clients dispatch on %s", a.Type(), protocol.AutomationsURI)
}

// ActionAccepted queues an accepted action for the scheduler.
func (o catalogueOwner) ActionAccepted(c host.Client, a protocol.StateAction) {
	s := o.s
	s.mu.Lock()
	switch a := a.(type) {
	case *protocol.AutomationCreateRequestedAction:
		s.reserved[a.Resource] = true
	case *protocol.AutomationRemovedAction:
		if s.autos[a.Resource] != nil {
			s.removing[a.Resource] = true
		}
	}
	s.queue = append(s.queue, queued{client: c.ID(), action: a})
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (catalogueOwner) Unsubscribed(host.Client, int) {}

// runOwner is the ChannelOwner of the run channels.
type runOwner struct{ s *Service }

func (runOwner) ValidateAction(c host.Client, _ protocol.SnapshotState, a protocol.StateAction) string {
	if _, ok := a.(*protocol.AutomationRunCancelRequestedAction); ok {
		return "this host does not cancel automation runs (it does not advertise automations.runCancellation)"
	}
	return fmt.Sprintf("%s is not an action clients dispatch on a run's channel", a.Type())
}

func (runOwner) ActionAccepted(host.Client, protocol.StateAction) {}
func (runOwner) Unsubscribed(host.Client, int)                    {}
