package automation

import (
	"fmt"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// automationScheme prefixes every automation's resource
// (AutomationEntry.resource: ahp-automation:/<id>).
const automationScheme = "ahp-automation:/"

// checkResource returns why uri cannot name an automation, or "".
func checkResource(uri string) string {
	id, ok := strings.CutPrefix(uri, automationScheme)
	if !ok || id == "" || strings.ContainsAny(id, "/?# \t\r\n") {
		return fmt.Sprintf("an automation's resource is ahp-automation:/<id> with an id of its own (no '/', '?', '#' or spaces), not %q", uri)
	}
	return ""
}

// checkDefinition returns why a definition cannot be kept, or "". zones
// are the time zones the host can load.
func checkDefinition(d *protocol.AutomationDefinition, zones map[string]bool) string {
	if strings.TrimSpace(d.Title) == "" {
		return "the definition's title is empty"
	}
	if r := checkMessage(&d.Message); r != "" {
		return r
	}
	if r := checkTemplate(&d.Session); r != "" {
		return r
	}
	if r := checkTriggers(d.Triggers, zones); r != "" {
		return r
	}
	return checkConditions(d.DisableConditions)
}

func checkMessage(m *protocol.Message) string {
	if strings.TrimSpace(m.Text) == "" {
		return "the automation's message has no text"
	}
	if m.Origin.Kind != protocol.MessageKindAutomation {
		return fmt.Sprintf("the automation's message must have origin kind %q, not %q", protocol.MessageKindAutomation, m.Origin.Kind)
	}
	return ""
}

func checkTemplate(t *protocol.AutomationSessionTemplate) string {
	if len(t.Customizations) > 0 {
		return "this host does not capture client plugins for automations (it does not advertise automations.customizations): remove session.customizations"
	}
	if t.Provider != nil && *t.Provider == "" {
		return "session.provider is empty: omit it for the host's default agent"
	}
	for _, d := range t.WorkingDirectories {
		if !strings.HasPrefix(d, "file:") {
			return fmt.Sprintf("session.workingDirectories: %q is not a file: URI", d)
		}
	}
	return ""
}

func checkTriggers(ts []protocol.AutomationTrigger, zones map[string]bool) string {
	seen := map[string]bool{}
	for i, t := range ts {
		switch t := t.(type) {
		case *protocol.AutomationScheduleTrigger:
			if t.ID == "" {
				return fmt.Sprintf("trigger %d has an empty id", i)
			}
			if seen[t.ID] {
				return fmt.Sprintf("two triggers have the id %q", t.ID)
			}
			seen[t.ID] = true
			if _, err := normalizeCron(t.Schedule.Expression); err != nil {
				return fmt.Sprintf("trigger %q: %v", t.ID, err)
			}
			if r := checkZone(t.Schedule.TimeZone, zones); r != "" {
				return fmt.Sprintf("trigger %q: %s", t.ID, r)
			}
			if p := t.MisfirePolicy; p != nil && *p != protocol.AutomationMisfirePolicySkip && *p != protocol.AutomationMisfirePolicyRunOnce {
				return fmt.Sprintf("trigger %q: misfirePolicy %q is neither %q nor %q", t.ID, *p, protocol.AutomationMisfirePolicySkip, protocol.AutomationMisfirePolicyRunOnce)
			}
		case *protocol.AutomationEventTrigger:
			return fmt.Sprintf("trigger %q: this host defines no event trigger types (listAutomationTriggerDefinitions lists none); use a schedule trigger", t.ID)
		default:
			return fmt.Sprintf("trigger %d: kind %q is not a trigger kind this host knows", i, t.Kind())
		}
	}
	return ""
}

func checkZone(name string, zones map[string]bool) string {
	if name == "" {
		return "the schedule's timeZone is empty: name an IANA time zone such as \"UTC\" or \"Europe/Berlin\""
	}
	if name == "Local" || !zones[name] {
		return fmt.Sprintf("unknown time zone %q: name an IANA time zone such as \"UTC\" or \"Europe/Berlin\"", name)
	}
	return ""
}

func checkConditions(cs []protocol.AutomationDisableCondition) string {
	seen := map[string]bool{}
	for i, c := range cs {
		if seen[c.Kind()] {
			return fmt.Sprintf("disableConditions: the kind %q appears twice", c.Kind())
		}
		seen[c.Kind()] = true
		switch c := c.(type) {
		case *protocol.AutomationAfterRunsCondition:
			if c.Max < 1 {
				return fmt.Sprintf("disableConditions: afterRuns max %d is not a positive integer", c.Max)
			}
		case *protocol.AutomationAfterDateCondition:
			if _, err := protocol.ParseTime(c.Date); err != nil {
				return fmt.Sprintf("disableConditions: afterDate %q is not an ISO 8601 timestamp", c.Date)
			}
		default:
			return fmt.Sprintf("disableConditions: condition %d has kind %q, which this host does not know", i, c.Kind())
		}
	}
	return ""
}

// afterRuns returns the definition's afterRuns condition, or nil.
func afterRuns(d *protocol.AutomationDefinition) *protocol.AutomationAfterRunsCondition {
	for _, c := range d.DisableConditions {
		if c, ok := c.(*protocol.AutomationAfterRunsCondition); ok {
			return c
		}
	}
	return nil
}

// afterDate returns the definition's afterDate condition's date, or "".
func afterDate(d *protocol.AutomationDefinition) string {
	for _, c := range d.DisableConditions {
		if c, ok := c.(*protocol.AutomationAfterDateCondition); ok {
			return c.Date
		}
	}
	return ""
}
