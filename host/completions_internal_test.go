package host

import (
	"testing"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/internal/completion"
	"github.com/ahp-go/ahp/protocol"
)

// TestCommandCompletions: "/" words at the start of a message complete to
// the skills the session's customizations list, enabled ones only, with
// UTF-16 ranges and the command named in the attachment's _meta.
func TestCommandCompletions(t *testing.T) {
	skill := func(name string, enabled bool) protocol.ChildCustomization {
		return &protocol.SkillCustomization{ID: name, URI: "acp:command/" + name, Name: name, Enabled: &enabled}
	}
	off := false
	custom := []protocol.Customization{
		&protocol.PluginCustomization{ID: "acp-commands", Name: "Commands", Children: []protocol.ChildCustomization{
			skill("/review", true), skill("/reset", true), skill("/hidden", false), skill("with space", true),
		}},
		&protocol.PluginCustomization{ID: "off", Name: "Off", Enabled: &off, Children: []protocol.ChildCustomization{skill("/offcmd", true)}},
		&protocol.DirectoryCustomization{ID: "dir", Enabled: true, Children: []protocol.ChildCustomization{skill("deploy", true)}},
	}
	cmds := commandsOf(custom, nil)
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	if len(names) != 3 || names[0] != "review" || names[1] != "reset" || names[2] != "deploy" {
		t.Fatalf("commands %v", names)
	}
	tests := []struct {
		text       string
		cur        int // bytes
		want       []string
		start, end int64
	}{
		{"/re", 3, []string{"/reset", "/review"}, 0, 3},
		{"/rev", 4, []string{"/review"}, 0, 4},
		{"/", 1, []string{"/review", "/reset", "/deploy"}, 0, 1},
		{"  /dep 😀", 6, []string{"/deploy"}, 2, 6},
		{"/x", 2, nil, 0, 2},
	}
	for _, tt := range tests {
		w := completion.WordAt(tt.text, tt.cur)
		items := commandItems(tt.text, w, cmds)
		var got []string
		for _, it := range items {
			got = append(got, it.InsertText)
			if *it.RangeStart != tt.start || *it.RangeEnd != tt.end {
				t.Errorf("%q: %s range [%d,%d), want [%d,%d)", tt.text, it.InsertText, *it.RangeStart, *it.RangeEnd, tt.start, tt.end)
			}
			att := it.Attachment.(*protocol.SimpleMessageAttachment)
			var name string
			if err := protocol.Unmarshal(att.Meta[agent.CommandMetaKey], &name); err != nil || "/"+name != it.InsertText || att.Label != it.InsertText {
				t.Errorf("%q: attachment %+v", tt.text, att)
			}
		}
		if len(got) != len(tt.want) {
			t.Errorf("%q: %v, want %v", tt.text, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: %v, want %v", tt.text, got, tt.want)
				break
			}
		}
	}
}
