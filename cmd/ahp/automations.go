package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/internal/fileuri"
	"github.com/ahp-go/ahp/protocol"
)

// errNoAutomation: the automation named does not exist.
var errNoAutomation = errors.New("no such automation")

type automationOptions struct {
	cron, tz, provider, cwd, id string
	disabled, wait              bool
}

func automationFlags(fs *flag.FlagSet) any {
	o := &automationOptions{}
	fs.StringVar(&o.cron, "cron", "", "create: five-field cron schedule, such as \"0 9 * * 1-5\" (none: run by hand only)")
	fs.StringVar(&o.tz, "tz", "UTC", "create: IANA time zone of --cron")
	fs.StringVar(&o.provider, "provider", "", "create: agent provider of each run's session (default: the host's first)")
	fs.StringVar(&o.cwd, "cwd", "", "create: working directory of each run's session")
	fs.StringVar(&o.id, "id", "", "create: the automation's ID (default: a new one)")
	fs.BoolVar(&o.disabled, "disabled", false, "create: start with the schedule off")
	fs.BoolVar(&o.wait, "wait", false, "run: wait for the run to end; exit 5 when it failed")
	return o
}

// runAutomations is ahp automations [list|show|create|enable|disable|run|runs|rm].
func runAutomations(ctx context.Context, a *app, pos []string, flags any) error {
	o := flags.(*automationOptions)
	verb := "list"
	if len(pos) > 0 {
		verb, pos = pos[0], pos[1:]
	}
	want := map[string]int{"list": 0, "show": 1, "create": 2, "enable": 1, "disable": 1, "run": 1, "runs": 1, "rm": 1}
	n, ok := want[verb]
	if !ok {
		return usagef("unknown automations command %q (list, show, create, enable, disable, run, runs, rm)", verb)
	}
	if len(pos) != n {
		return usagef("automations %s takes %d argument(s), got %d", verb, n, len(pos))
	}
	if _, err := a.connect(ctx); err != nil {
		return err
	}
	sub, err := a.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: protocol.AutomationsURI})
	if err != nil {
		if errors.Is(err, client.ErrNotFound) || errors.Is(err, client.ErrInvalidParams) {
			return fmt.Errorf("the host serves no automations (%w)", err)
		}
		return err
	}
	defer sub.Close()
	cat := func() *protocol.AutomationState { return client.StateOf[*protocol.AutomationState](sub) }
	if verb == "list" {
		return a.listAutomations(cat())
	}
	if verb == "create" {
		return a.createAutomation(ctx, sub, o, pos[0], pos[1])
	}
	e, err := findAutomation(cat(), pos[0])
	if err != nil {
		return err
	}
	switch verb {
	case "show":
		return a.showAutomation(e)
	case "runs":
		// Every run the host keeps, a page at a time.
		for e.RunsNextCursor != nil {
			cursor := *e.RunsNextCursor
			if _, err := a.c.FetchAutomationRuns(ctx, &protocol.FetchAutomationRunsParams{Automation: e.Resource, Cursor: &cursor}); err != nil {
				return err
			}
			if e, err = waitEntry(ctx, sub, e.Resource, func(x *protocol.AutomationEntry) bool {
				return x.RunsNextCursor == nil || *x.RunsNextCursor != cursor
			}); err != nil {
				return err
			}
		}
		return a.listRuns(e)
	case "enable", "disable":
		enabled := verb == "enable"
		if err := dispatchWait(ctx, sub, &protocol.AutomationUpdateRequestedAction{Resource: e.Resource, Changes: protocol.AutomationDefinitionPatch{Enabled: &enabled}}); err != nil {
			return err
		}
		e, err = waitEntry(ctx, sub, e.Resource, func(e *protocol.AutomationEntry) bool { return e.Definition.Enabled == enabled })
		if err != nil {
			return err
		}
		if a.g.json {
			return a.printJSON(e)
		}
		fmt.Fprintf(a.stderr, "%sd %s\n", verb, automationID(e.Resource))
		return nil
	case "rm":
		if err := dispatchWait(ctx, sub, &protocol.AutomationRemovedAction{Resource: e.Resource}); err != nil {
			return err
		}
		if a.g.json {
			return a.printJSON(map[string]string{"removed": e.Resource})
		}
		fmt.Fprintf(a.stderr, "removed %s\n", automationID(e.Resource))
		return nil
	case "run":
		return a.runAutomationNow(ctx, e, o.wait)
	}
	return nil
}

// findAutomation finds an automation by resource, ID or unique ID prefix.
func findAutomation(cat *protocol.AutomationState, arg string) (*protocol.AutomationEntry, error) {
	var matches []*protocol.AutomationEntry
	for i := range cat.Entries {
		e := &cat.Entries[i]
		id := automationID(e.Resource)
		if e.Resource == arg || id == arg {
			return e, nil
		}
		if !isURI(arg) && strings.HasPrefix(id, arg) {
			matches = append(matches, e)
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("%w: %s", errNoAutomation, arg)
	case 1:
		return matches[0], nil
	}
	return nil, usagef("%q matches %d automations; give more of the ID", arg, len(matches))
}

func automationID(uri string) string { return strings.TrimPrefix(uri, "ahp-automation:/") }

// dispatchWait dispatches a catalogue action and waits until the host
// applied or rejected it.
func dispatchWait(ctx context.Context, sub *client.Subscription, action protocol.StateAction) error {
	r, err := sub.Dispatch(ctx, action)
	if err != nil {
		return err
	}
	return r.Wait(ctx)
}

// waitEntry waits until the catalogue holds an entry satisfying ok.
func waitEntry(ctx context.Context, sub *client.Subscription, uri string, ok func(*protocol.AutomationEntry) bool) (*protocol.AutomationEntry, error) {
	for {
		for i, e := range client.StateOf[*protocol.AutomationState](sub).Entries {
			if e.Resource == uri && ok(&e) {
				return &client.StateOf[*protocol.AutomationState](sub).Entries[i], nil
			}
		}
		if _, err := sub.Next(ctx); err != nil && err != client.ErrLagged {
			return nil, err
		}
	}
}

func (a *app) createAutomation(ctx context.Context, sub *client.Subscription, o *automationOptions, title, prompt string) error {
	if strings.TrimSpace(title) == "" || strings.TrimSpace(prompt) == "" {
		return usagef("automations create TITLE PROMPT: both must be given")
	}
	def := protocol.AutomationDefinition{
		Title:    title,
		Message:  protocol.Message{Text: prompt, Origin: protocol.MessageOrigin{Kind: protocol.MessageKindAutomation}},
		Enabled:  !o.disabled,
		Triggers: []protocol.AutomationTrigger{},
	}
	if o.cron != "" {
		def.Triggers = append(def.Triggers, &protocol.AutomationScheduleTrigger{ID: "schedule", Schedule: protocol.AutomationSchedule{Expression: o.cron, TimeZone: o.tz}})
	}
	if o.provider != "" {
		def.Session.Provider = &o.provider
	}
	if o.cwd != "" {
		dir, err := filepath.Abs(o.cwd)
		if err != nil {
			return err
		}
		def.Session.WorkingDirectories = []string{(&url.URL{Scheme: "file", Path: fileuri.URIPath(dir)}).String()}
	}
	id := o.id
	if id == "" {
		id = a.newID()
	}
	uri := "ahp-automation:/" + id
	if err := dispatchWait(ctx, sub, &protocol.AutomationCreateRequestedAction{Resource: uri, Definition: def}); err != nil {
		return err
	}
	e, err := waitEntry(ctx, sub, uri, func(*protocol.AutomationEntry) bool { return true })
	if err != nil {
		return err
	}
	if a.g.json {
		return a.printJSON(e)
	}
	fmt.Fprintln(a.stdout, automationID(e.Resource))
	return nil
}

func (a *app) runAutomationNow(ctx context.Context, e *protocol.AutomationEntry, wait bool) error {
	res, err := a.c.RunAutomation(ctx, &protocol.RunAutomationParams{Automation: e.Resource, RequestID: a.newID()})
	if err != nil {
		return err
	}
	if !wait {
		if a.g.json {
			return a.printJSON(map[string]string{"run": res.Resource})
		}
		fmt.Fprintln(a.stdout, res.Resource)
		return nil
	}
	sub, err := a.c.Subscribe(ctx, &protocol.SubscribeParams{Channel: res.Resource})
	if err != nil {
		return err
	}
	defer sub.Close()
	for {
		st := client.StateOf[*protocol.AutomationRunState](sub)
		switch l := st.Lifecycle.(type) {
		case *protocol.AutomationCompletedRunLifecycle, *protocol.AutomationCancelledRunLifecycle:
			if a.g.json {
				return a.printJSON(st)
			}
			fmt.Fprintf(a.stdout, "%s %s %s\n", res.Resource, l.Status(), sessionText(st.PrimarySession))
			if _, ok := l.(*protocol.AutomationCancelledRunLifecycle); ok {
				return &turnError{msg: "the run was cancelled"}
			}
			return nil
		case *protocol.AutomationFailedRunLifecycle:
			if a.g.json {
				a.printJSON(st)
			}
			return &turnError{msg: fmt.Sprintf("the run failed: %s", l.Error.Message)}
		}
		if _, err := sub.Next(ctx); err != nil && err != client.ErrLagged {
			return err
		}
	}
}

func sessionText(s *string) string {
	if s == nil {
		return ""
	}
	return "session " + sessionID(*s)
}

func (a *app) listAutomations(cat *protocol.AutomationState) error {
	if a.g.json {
		for _, e := range cat.Entries {
			if err := a.printJSON(e); err != nil {
				return err
			}
		}
		return nil
	}
	if len(cat.Entries) == 0 {
		fmt.Fprintln(a.stderr, "no automations")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tSCHEDULE\tNEXT RUN\tLAST RUN\tTITLE")
	for _, e := range cat.Entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", automationID(e.Resource), enabledText(e.Definition.Enabled),
			scheduleText(e.Definition.Triggers), a.optTime(e.NextRunAt), lastRunText(e.Runs), e.Definition.Title)
	}
	return tw.Flush()
}

func (a *app) showAutomation(e *protocol.AutomationEntry) error {
	if a.g.json {
		return a.printJSON(e)
	}
	d := e.Definition
	fmt.Fprintf(a.stdout, "%s (%s)\n", d.Title, automationID(e.Resource))
	fmt.Fprintf(a.stdout, "  state:     %s\n", enabledText(d.Enabled))
	fmt.Fprintf(a.stdout, "  schedule:  %s\n", scheduleText(d.Triggers))
	fmt.Fprintf(a.stdout, "  next run:  %s\n", a.optTime(e.NextRunAt))
	provider := "the host's default"
	if d.Session.Provider != nil {
		provider = *d.Session.Provider
	}
	fmt.Fprintf(a.stdout, "  provider:  %s\n", provider)
	if len(d.Session.WorkingDirectories) > 0 {
		fmt.Fprintf(a.stdout, "  directory: %s\n", strings.Join(d.Session.WorkingDirectories, ", "))
	}
	fmt.Fprintf(a.stdout, "  created:   %s\n", a.timeText(e.CreatedAt))
	fmt.Fprintf(a.stdout, "  message:   %s\n", d.Message.Text)
	fmt.Fprintf(a.stdout, "  runs:      %d kept\n", len(e.Runs))
	return nil
}

func (a *app) listRuns(e *protocol.AutomationEntry) error {
	if a.g.json {
		for _, r := range e.Runs {
			if err := a.printJSON(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(e.Runs) == 0 {
		fmt.Fprintln(a.stderr, "no runs")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tORIGIN\tCREATED\tSESSION\tERROR")
	for _, r := range e.Runs {
		errText := ""
		if f, ok := r.Lifecycle.(*protocol.AutomationFailedRunLifecycle); ok {
			errText = f.Error.Message
		}
		session := ""
		if r.PrimarySession != nil {
			session = sessionID(*r.PrimarySession)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", strings.TrimPrefix(r.Resource, "ahp-automation-run:/"), r.Lifecycle.Status(),
			originText(r.Origin), a.timeText(protocol.RunCreatedAt(r.Lifecycle)), session, errText)
	}
	return tw.Flush()
}

func enabledText(on bool) string {
	if on {
		return "enabled"
	}
	return "disabled"
}

func scheduleText(ts []protocol.AutomationTrigger) string {
	var out []string
	for _, t := range ts {
		if s, ok := t.(*protocol.AutomationScheduleTrigger); ok {
			out = append(out, s.Schedule.Expression+" "+s.Schedule.TimeZone)
		}
	}
	if len(out) == 0 {
		return "manual"
	}
	return strings.Join(out, "; ")
}

func (a *app) optTime(s *string) string {
	if s == nil {
		return "-"
	}
	return a.timeText(*s)
}

func lastRunText(runs []protocol.AutomationRunSummary) string {
	if len(runs) == 0 {
		return "-"
	}
	return runs[0].Lifecycle.Status()
}

func originText(o protocol.AutomationRunOrigin) string {
	switch o := o.(type) {
	case *protocol.AutomationManualRunOrigin:
		return "manual"
	case *protocol.AutomationTriggeredRunOrigin:
		if o.CatchUp != nil && *o.CatchUp {
			return "catch-up"
		}
		return "schedule"
	}
	return o.Kind()
}
