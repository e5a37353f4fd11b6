// Package automation runs AHP automations: durable definitions that start
// a fresh session with a first message on a cron schedule in a named time
// zone, or when a client asks (runAutomation), with no client connected.
//
// A Service is hosted by package host through host.Automations
// (Options.Automations). It keeps the ahp-automations:// catalogue and one
// ahp-automation-run:/<id> channel per retained run, opened on the host
// with Host.OpenChannel; the host sequences, replays and fans out their
// actions like every other channel's. The client actions of the catalogue
// (automation/createRequested, automation/updateRequested,
// automation/removed) are checked while the host holds its lock
// (ChannelOwner.ValidateAction) and applied by the service's scheduler
// goroutine, which saves the definition in the store and then publishes
// automation/set or the removal.
//
// Definitions and runs are records of the store (store.Records). A restart
// resumes every schedule; what happens to occurrences missed while the
// host was down follows each trigger's misfirePolicy (docs/automations.md).
//
// Quick start:
//
//	h, err := host.New(&host.Options{Store: st, Agents: agents,
//		Automations: automation.Plug(&automation.Options{Store: st})})
package automation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/google/uuid"
)

// Defaults for Options.
const (
	DefaultRunHistory = 50
	// RunsPage is how many runs an entry shows at first, and how many
	// more each fetchAutomationRuns adds.
	RunsPage          = 10
	DefaultRunTimeout = 2 * time.Hour
)

// Record kinds in the store.
const (
	kindAutomation = "automation"
	kindRun        = "automationRun"
)

// Options configures a Service.
type Options struct {
	// Store keeps definitions and runs; it must implement store.Records
	// (both stores of this module do). Usually the host's own store.
	Store store.Store
	// Logger receives the service's logs. Nil discards them.
	Logger *slog.Logger
	// NewID returns fresh identifiers for runs and their sessions. Nil
	// means random UUIDs.
	NewID func() string
	// RunHistory is how many ended runs each automation keeps; older ones
	// are deleted. Zero means DefaultRunHistory.
	RunHistory int
	// RunTimeout bounds a run: a run whose turn has not ended by then
	// fails. Zero means DefaultRunTimeout.
	RunTimeout time.Duration
}

// Host is what a Service needs from the host that serves it: the
// host.AutomationHost that host.Options.Automations is given.
type Host = host.AutomationHost

// Plug returns the constructor host.Options.Automations takes.
func Plug(opts *Options) func(host.AutomationHost) (host.Automations, error) {
	return func(h host.AutomationHost) (host.Automations, error) { return New(h, opts) }
}

// Service is the automations of one host. Create one with New.
type Service struct {
	h       Host
	st      store.Store
	rs      store.Records
	log     *slog.Logger
	newID   func() string
	history int
	timeout time.Duration
	zones   map[string]bool // the time zones that can be loaded

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{}

	// change serializes changes: each is saved, then published, before
	// the next starts, so subscribers see them in the order they were
	// made. Taken before mu; the host is never called with mu held (the
	// host calls ValidateAction and ActionAccepted with its lock held,
	// and they take mu).
	change sync.Mutex

	mu       sync.Mutex
	closed   bool
	autos    map[string]*auto
	order    []string // automation resources, catalogue order
	runs     map[string]*run
	reserved map[string]bool // creates accepted and not applied yet
	removing map[string]bool // removals accepted and not applied yet
	queue    []queued        // accepted client actions to apply
	locs     map[string]*time.Location
	seq      int64 // orders runs
}

type queued struct {
	client string
	action protocol.StateAction
}

// auto is one automation.
type auto struct {
	entry  protocol.AutomationEntry // Runs is built when published
	trigs  []*trigger
	runs   []*run // newest first, every one kept
	window int    // how many of runs the entry shows
}

// trigger is one schedule trigger's state.
type trigger struct {
	id     string
	norm   string // normalized cron expression
	zone   string
	policy protocol.AutomationMisfirePolicy
	sched  *schedule // nil until loaded, or when the zone cannot be
	next   time.Time // earliest occurrence awaiting evaluation; zero: none
	missed bool      // next passed while the host was down
}

// run is one run.
type run struct {
	state     protocol.AutomationRunState
	requestID string
	order     int64
	ended     chan error // the run's turn ended (nil error: completed)
}

// storedAutomation is an automation's record.
type storedAutomation struct {
	Entry protocol.AutomationEntry `json:"entry"`
	// Next holds, per schedule trigger id, the occurrence awaiting
	// evaluation (RFC 3339).
	Next map[string]string `json:"next,omitempty"`
}

// storedRun is a run's record.
type storedRun struct {
	State     protocol.AutomationRunState `json:"state"`
	RequestID string                      `json:"requestId,omitempty"`
	Order     int64                       `json:"order"`
}

// New reads the automations and runs from the store, fails the runs a
// stop interrupted, opens the catalogue and run channels on h and starts
// the scheduler.
func New(h Host, opts *Options) (*Service, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Store == nil {
		return nil, errors.New("automation: no store")
	}
	rs, ok := o.Store.(store.Records)
	if !ok {
		return nil, fmt.Errorf("automation: the store (%T) does not keep records", o.Store)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.NewID == nil {
		o.NewID = uuid.NewString
	}
	if o.RunHistory <= 0 {
		o.RunHistory = DefaultRunHistory
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = DefaultRunTimeout
	}
	s := &Service{
		h: h, st: o.Store, rs: rs, log: o.Logger, newID: o.NewID, history: o.RunHistory, timeout: o.RunTimeout,
		zones: knownZones(), kick: make(chan struct{}, 1),
		autos: map[string]*auto{}, runs: map[string]*run{}, reserved: map[string]bool{}, removing: map[string]bool{},
		locs: map[string]*time.Location{},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if err := s.load(); err != nil {
		s.cancel()
		return nil, err
	}
	s.wg.Go(s.loop)
	return s, nil
}

// load reads the store and opens the channels.
func (s *Service) load() error {
	ctx := s.ctx
	autos, err := s.rs.Records(ctx, kindAutomation)
	if err != nil {
		return fmt.Errorf("automation: read the automations: %w", err)
	}
	runs, err := s.rs.Records(ctx, kindRun)
	if err != nil {
		return fmt.Errorf("automation: read the runs: %w", err)
	}
	now := time.Now()
	var stored []*storedAutomation
	for _, r := range autos {
		var sa storedAutomation
		if err := protocol.Unmarshal(r.Data, &sa); err != nil {
			return fmt.Errorf("automation: the record of %s: %w", r.Key, err)
		}
		stored = append(stored, &sa)
	}
	// Catalogue order: creation order.
	slices.SortStableFunc(stored, func(a, b *storedAutomation) int {
		return compareTime(a.Entry.CreatedAt, b.Entry.CreatedAt)
	})
	for _, sa := range stored {
		a := &auto{entry: sa.Entry, window: RunsPage}
		a.entry.Runs = nil
		s.setTriggers(a)
		for _, t := range a.trigs {
			if at, ok := sa.Next[t.id]; ok {
				if tm, err := protocol.ParseTime(at); err == nil {
					t.next = tm
					t.missed = !tm.After(now)
				}
			} else if a.entry.Definition.Enabled && t.sched != nil {
				t.next = t.sched.next(now)
			}
		}
		s.autos[a.entry.Resource] = a
		s.order = append(s.order, a.entry.Resource)
	}
	var fix store.Batch
	for _, r := range runs {
		var sr storedRun
		if err := protocol.Unmarshal(r.Data, &sr); err != nil {
			return fmt.Errorf("automation: the record of run %s: %w", r.Key, err)
		}
		a := s.autos[sr.State.Automation]
		if a == nil {
			fix = append(fix, store.DeleteRecord{Kind: kindRun, Key: r.Key})
			continue
		}
		ru := &run{state: sr.State, requestID: sr.RequestID, order: sr.Order}
		s.seq = max(s.seq, sr.Order)
		if !terminal(ru.state.Lifecycle) {
			// The host stopped during the run: its turn was ended then.
			ru.state.Lifecycle = failedLifecycle(ru.state.Lifecycle, protocol.FormatTime(now), "interrupted", "ahpd stopped before the run ended")
			fix = append(fix, s.runRecord(ru))
		}
		s.runs[ru.state.Resource] = ru
		a.runs = append(a.runs, ru)
	}
	for _, a := range s.autos {
		slices.SortFunc(a.runs, func(x, y *run) int { return int(y.order - x.order) })
		s.setNextRunAt(a)
	}
	if len(fix) > 0 {
		if err := s.st.Write(ctx, fix); err != nil {
			return fmt.Errorf("automation: %w", err)
		}
	}
	if err := s.h.OpenChannel(protocol.AutomationsURI, s.catalogue(), catalogueOwner{s}); err != nil {
		return fmt.Errorf("automation: %w", err)
	}
	for _, ru := range s.runs {
		if err := s.h.OpenChannel(ru.state.Resource, cloneRun(&ru.state), runOwner{s}); err != nil {
			return fmt.Errorf("automation: %w", err)
		}
	}
	return nil
}

// Close stops the scheduler and the runs' watchers, and records the runs
// still going as failed (interrupted): the host ends their turns as it
// stops. A second Close does nothing.
func (s *Service) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return nil
	}
	s.cancel()
	s.wg.Wait()
	return s.apply(func(ch *change) error {
		at := now()
		var active []*run
		for _, uri := range s.order {
			for _, r := range s.autos[uri].runs {
				if !terminal(r.state.Lifecycle) {
					active = append(active, r)
				}
			}
		}
		for _, r := range active {
			s.runChangeLocked(ch, r, &protocol.AutomationRunLifecycleChangedAction{Lifecycle: failedLifecycle(r.state.Lifecycle, at, "interrupted", "ahpd stopped before the run ended")})
		}
		return nil
	})
}

// Methods lists the automation commands for the host's method table.
func (s *Service) Methods() []host.Method {
	return []host.Method{
		host.Handle("listAutomationTriggerDefinitions", s.ListTriggerDefinitions),
		host.Handle("runAutomation", s.Run),
		host.Handle("fetchAutomationRuns", func(ctx context.Context, c host.Client, p *protocol.FetchAutomationRunsParams) (*protocol.FetchAutomationRunsResult, error) {
			if err := s.FetchRuns(ctx, c, p); err != nil {
				return nil, err
			}
			return &protocol.FetchAutomationRunsResult{}, nil
		}),
	}
}

// Capabilities advertises the catalogue, creation and schedules.
func (s *Service) Capabilities() *protocol.AutomationCapabilities {
	return &protocol.AutomationCapabilities{
		Create:          &protocol.AutomationCreateCapability{},
		Schedules:       &protocol.AutomationScheduleCapabilities{},
		RunHistoryLimit: protocol.Ptr(float64(s.history)),
	}
}

// ListTriggerDefinitions answers listAutomationTriggerDefinitions: this
// host has no event triggers (schedules are the protocol's own and are
// not listed).
func (s *Service) ListTriggerDefinitions(ctx context.Context, c host.Client, p *protocol.ListAutomationTriggerDefinitionsParams) (*protocol.ListAutomationTriggerDefinitionsResult, error) {
	return &protocol.ListAutomationTriggerDefinitionsResult{Items: []protocol.AutomationTriggerDefinition{}}, nil
}

// Run answers runAutomation: it admits a manual run, saves it, answers
// with its resource and starts it. A request id seen before for the same
// automation answers with that run.
func (s *Service) Run(ctx context.Context, c host.Client, p *protocol.RunAutomationParams) (*protocol.RunAutomationResult, error) {
	if p.RequestID == "" {
		return nil, invalid("runAutomation: requestId is empty")
	}
	var res string
	err := s.apply(func(ch *change) error {
		if s.closed {
			return &protocol.Error{Code: protocol.CodeInternalError, Message: "runAutomation: the host is shutting down"}
		}
		a := s.autos[p.Automation]
		if a == nil || s.removing[p.Automation] {
			return &protocol.Error{Code: protocol.CodeNotFound, Message: fmt.Sprintf("runAutomation: no automation %s", p.Automation)}
		}
		for _, r := range a.runs {
			if r.requestID == p.RequestID {
				res = r.state.Resource
				return nil
			}
		}
		r := s.admitLocked(ch, a, &protocol.AutomationManualRunOrigin{}, p.RequestID)
		res = r.state.Resource
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &protocol.RunAutomationResult{Resource: res}, nil
}

// FetchRuns answers fetchAutomationRuns: the entry shows RunsPage more of
// the runs kept, for every subscriber of the catalogue, through
// automation/set. The cursor is the entry's runsNextCursor (the oldest
// run it shows); without one, the next page after what the entry shows.
// With nothing older the entry is published again as it is.
func (s *Service) FetchRuns(ctx context.Context, c host.Client, p *protocol.FetchAutomationRunsParams) error {
	return s.apply(func(ch *change) error {
		a := s.autos[p.Automation]
		if a == nil || s.removing[p.Automation] {
			return &protocol.Error{Code: protocol.CodeNotFound, Message: fmt.Sprintf("fetchAutomationRuns: no automation %s", p.Automation)}
		}
		if p.Cursor != nil {
			i := slices.IndexFunc(a.runs, func(r *run) bool { return r.state.Resource == *p.Cursor })
			if i < 0 {
				return invalid("fetchAutomationRuns: the cursor %q names no run of %s (it is an entry's runsNextCursor)", *p.Cursor, p.Automation)
			}
			// The page after the run the cursor names.
			a.window = max(a.window, i+1)
		}
		if a.window < len(a.runs) {
			a.window += RunsPage
		}
		ch.setLocked(s, a)
		return nil
	})
}

func invalid(format string, args ...any) error {
	return &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// A change is what one step did: records to save, then channels to open,
// actions to publish and channels to close, in that order.
type change struct {
	ops     store.Batch
	open    []*run
	publish []publication
	close   []string
	start   []*run
}

type publication struct {
	uri    string
	action protocol.StateAction
}

// setLocked publishes a's entry and saves its record. An automation a
// client is removing is saved until the removal is applied, but no longer
// published: the client's automation/removed took it out of the
// catalogue.
func (ch *change) setLocked(s *Service, a *auto) {
	ch.ops = append(ch.ops, s.autoRecord(a))
	if s.removing[a.entry.Resource] {
		return
	}
	ch.publish = append(ch.publish, publication{protocol.AutomationsURI, &protocol.AutomationSetAction{Automation: s.entryLocked(a)}})
}

// apply runs f with the service locked, then saves and publishes what it
// changed, then starts the runs it admitted. Changes are applied one at a
// time.
func (s *Service) apply(f func(*change) error) error {
	s.change.Lock()
	defer s.change.Unlock()
	var ch change
	s.mu.Lock()
	err := f(&ch)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	start := ch.start
	if len(ch.ops) > 0 {
		if werr := s.st.Write(context.WithoutCancel(s.ctx), ch.ops); werr != nil {
			// Memory and store disagree from here; say so loudly. The
			// published state follows memory, which the next successful
			// write of the same records brings back in line. A run that
			// could not be saved does not start: it fails.
			s.log.Error("saving automations failed", "err", werr)
			err = &protocol.Error{Code: protocol.CodeInternalError, Message: "automations: saving failed: " + werr.Error()}
			start = nil
			for _, r := range ch.start {
				s.wg.Go(func() { s.finish(r, "", "storageError", "the run could not be saved: "+werr.Error()) })
			}
		}
	}
	for _, r := range ch.open {
		if oerr := s.h.OpenChannel(r.state.Resource, cloneRun(&r.state), runOwner{s}); oerr != nil {
			s.log.Error("opening a run channel failed", "run", r.state.Resource, "err", oerr)
		}
	}
	for _, p := range ch.publish {
		if perr := s.h.Publish(p.uri, p.action); perr != nil {
			s.log.Debug("publishing an automation change failed", "channel", p.uri, "err", perr)
		}
	}
	for _, uri := range ch.close {
		s.h.CloseChannel(uri)
	}
	for _, r := range start {
		s.wg.Go(func() { s.execute(r) })
	}
	return err
}

// admitLocked creates a pending run of a, to be saved, opened, published
// and started by the change.
func (s *Service) admitLocked(ch *change, a *auto, origin protocol.AutomationRunOrigin, requestID string) *run {
	s.seq++
	id := s.newID()
	r := &run{
		state: protocol.AutomationRunState{
			Resource:   "ahp-automation-run:/" + id,
			Automation: a.entry.Resource,
			Origin:     origin,
			Lifecycle:  &protocol.AutomationPendingRunLifecycle{CreatedAt: now()},
			Sessions:   []protocol.URI{},
		},
		requestID: requestID,
		order:     s.seq,
		ended:     make(chan error, 1),
	}
	s.runs[r.state.Resource] = r
	a.runs = slices.Insert(a.runs, 0, r)
	ch.ops = append(ch.ops, s.runRecord(r))
	ch.open = append(ch.open, r)
	s.pruneLocked(ch, a)
	ch.setLocked(s, a)
	ch.start = append(ch.start, r)
	return r
}

// pruneLocked drops the ended runs of a beyond the history limit.
func (s *Service) pruneLocked(ch *change, a *auto) {
	kept, ended := a.runs[:0], 0
	for _, r := range a.runs {
		if terminal(r.state.Lifecycle) {
			ended++
			if ended > s.history {
				delete(s.runs, r.state.Resource)
				ch.ops = append(ch.ops, store.DeleteRecord{Kind: kindRun, Key: r.state.Resource})
				ch.close = append(ch.close, r.state.Resource)
				continue
			}
		}
		kept = append(kept, r)
	}
	clear(a.runs[len(kept):])
	a.runs = kept
}

// runChangeLocked applies a run action to r and publishes it, with the
// automation's entry.
func (s *Service) runChangeLocked(ch *change, r *run, act protocol.StateAction) {
	switch act := act.(type) {
	case *protocol.AutomationRunLifecycleChangedAction:
		r.state.Lifecycle = act.Lifecycle
	case *protocol.AutomationRunSessionSetAction:
		if !slices.Contains(r.state.Sessions, act.Session) {
			r.state.Sessions = append(slices.Clone(r.state.Sessions), act.Session)
		}
	case *protocol.AutomationRunPrimarySessionChangedAction:
		r.state.PrimarySession = act.PrimarySession
	}
	ch.ops = append(ch.ops, s.runRecord(r))
	ch.publish = append(ch.publish, publication{r.state.Resource, act})
	if a := s.autos[r.state.Automation]; a != nil {
		if terminal(r.state.Lifecycle) {
			s.pruneLocked(ch, a)
		}
		ch.setLocked(s, a)
	}
}

// execute runs one admitted run: it starts its session with the
// automation's template and first message and records the outcome once
// the turn ends.
func (s *Service) execute(r *run) {
	var tmpl protocol.AutomationSessionTemplate
	var msg protocol.Message
	var createdAt string
	started := now()
	var live bool
	s.apply(func(ch *change) error {
		a := s.autos[r.state.Automation]
		if a == nil || s.runs[r.state.Resource] != r || s.closed {
			return nil
		}
		live = true
		tmpl, msg = a.entry.Definition.Session, a.entry.Definition.Message
		createdAt = protocol.RunCreatedAt(r.state.Lifecycle)
		s.runChangeLocked(ch, r, &protocol.AutomationRunLifecycleChangedAction{Lifecycle: &protocol.AutomationRunningRunLifecycle{CreatedAt: createdAt, StartedAt: started}})
		return nil
	})
	if !live {
		return
	}
	if msg.Model == nil {
		msg.Model = tmpl.Model
	}
	if msg.Agent == nil {
		msg.Agent = tmpl.Agent
	}
	session := protocol.SessionURI(s.newID())
	ended := r.ended
	err := s.h.StartSession(s.ctx, &host.SessionStart{
		Session:            session,
		Provider:           tmpl.Provider,
		WorkingDirectories: tmpl.WorkingDirectories,
		Config:             tmpl.Config,
		Origin:             &protocol.AutomationSessionOrigin{Automation: r.state.Automation, Run: r.state.Resource},
		Message:            msg,
		TurnEnded: func(err error) {
			select {
			case ended <- err:
			default:
			}
		},
	})
	if err != nil {
		if s.ctx.Err() != nil {
			return // shutting down: failed as interrupted at the next start
		}
		s.finish(r, started, "sessionFailed", "the run's session could not be created: "+errorMessage(err))
		return
	}
	s.apply(func(ch *change) error {
		if s.runs[r.state.Resource] != r {
			return nil
		}
		s.runChangeLocked(ch, r, &protocol.AutomationRunSessionSetAction{Session: session})
		s.runChangeLocked(ch, r, &protocol.AutomationRunPrimarySessionChangedAction{PrimarySession: &session})
		return nil
	})
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	select {
	case err := <-ended:
		if err != nil {
			s.finish(r, started, "turnFailed", err.Error())
		} else {
			s.finish(r, started, "", "")
		}
	case <-timer.C:
		s.finish(r, started, "timeout", fmt.Sprintf("the run's turn did not end within %v", s.timeout))
	case <-s.ctx.Done():
	}
}

// finish records a run's outcome: completed when errType is "", failed
// otherwise. started is "" for a run that never started.
func (s *Service) finish(r *run, started, errType, message string) {
	s.apply(func(ch *change) error {
		if s.runs[r.state.Resource] != r || terminal(r.state.Lifecycle) {
			return nil
		}
		created := protocol.RunCreatedAt(r.state.Lifecycle)
		var lc protocol.AutomationRunLifecycle
		if errType == "" {
			lc = &protocol.AutomationCompletedRunLifecycle{CreatedAt: created, StartedAt: started, CompletedAt: now()}
		} else {
			f := &protocol.AutomationFailedRunLifecycle{CreatedAt: created, CompletedAt: now(), Error: protocol.ErrorInfo{ErrorType: errType, Message: message}}
			if started != "" {
				f.StartedAt = &started
			}
			lc = f
		}
		s.runChangeLocked(ch, r, &protocol.AutomationRunLifecycleChangedAction{Lifecycle: lc})
		return nil
	})
}

func errorMessage(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}

// now is the service's clock, for the wire.
func now() string { return protocol.FormatTime(time.Now()) }

func compareTime(a, b string) int {
	ta, _ := protocol.ParseTime(a)
	tb, _ := protocol.ParseTime(b)
	return ta.Compare(tb)
}

func terminal(l protocol.AutomationRunLifecycle) bool {
	switch l.(type) {
	case *protocol.AutomationCompletedRunLifecycle, *protocol.AutomationFailedRunLifecycle, *protocol.AutomationCancelledRunLifecycle:
		return true
	}
	return false
}

func failedLifecycle(l protocol.AutomationRunLifecycle, at, errType, message string) protocol.AutomationRunLifecycle {
	f := &protocol.AutomationFailedRunLifecycle{CreatedAt: protocol.RunCreatedAt(l), CompletedAt: at, Error: protocol.ErrorInfo{ErrorType: errType, Message: message}}
	if r, ok := l.(*protocol.AutomationRunningRunLifecycle); ok {
		f.StartedAt = &r.StartedAt
	}
	return f
}

func cloneRun(st *protocol.AutomationRunState) *protocol.AutomationRunState {
	c := *st
	c.Sessions = slices.Clone(st.Sessions)
	return &c
}

// entryLocked returns a's entry as published, with its run summaries.
func (s *Service) entryLocked(a *auto) protocol.AutomationEntry {
	e := a.entry
	shown := a.runs
	if a.window < len(shown) {
		shown = shown[:a.window]
		e.RunsNextCursor = protocol.Ptr(shown[len(shown)-1].state.Resource)
	}
	e.Runs = make([]protocol.AutomationRunSummary, len(shown))
	for i, r := range shown {
		e.Runs[i] = protocol.AutomationRunSummary{
			Resource:       r.state.Resource,
			Automation:     r.state.Automation,
			Origin:         r.state.Origin,
			Lifecycle:      r.state.Lifecycle,
			PrimarySession: r.state.PrimarySession,
			SessionCount:   float64(len(r.state.Sessions)),
		}
	}
	e.Operations = []protocol.AutomationOperation{protocol.AutomationOperationUpdate, protocol.AutomationOperationRemove, protocol.AutomationOperationRun}
	return e
}

// catalogue returns the catalogue's state.
func (s *Service) catalogue() *protocol.AutomationState {
	st := &protocol.AutomationState{Entries: []protocol.AutomationEntry{}}
	for _, uri := range s.order {
		st.Entries = append(st.Entries, s.entryLocked(s.autos[uri]))
	}
	return st
}

func (s *Service) autoRecord(a *auto) store.Op {
	sa := storedAutomation{Entry: a.entry, Next: map[string]string{}}
	sa.Entry.Runs = []protocol.AutomationRunSummary{}
	sa.Entry.Operations = []protocol.AutomationOperation{}
	for _, t := range a.trigs {
		if !t.next.IsZero() {
			sa.Next[t.id] = protocol.FormatTime(t.next)
		}
	}
	data, err := protocol.Marshal(&sa)
	if err != nil {
		s.log.Error("encoding an automation failed", "automation", a.entry.Resource, "err", err)
	}
	return store.PutRecord{Record: store.Record{Kind: kindAutomation, Key: a.entry.Resource, Data: data}}
}

func (s *Service) runRecord(r *run) store.Op {
	data, err := protocol.Marshal(&storedRun{State: r.state, RequestID: r.requestID, Order: r.order})
	if err != nil {
		s.log.Error("encoding a run failed", "run", r.state.Resource, "err", err)
	}
	return store.PutRecord{Record: store.Record{Kind: kindRun, Key: r.state.Resource, Data: data}}
}
