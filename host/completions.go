package host

import (
	"context"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/internal/completion"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
)

// The bounds of one completions request: the files searched for an "@"
// word stop at the deadline, and at most completionLimit items return.
const (
	completionLimit   = 50
	completionTimeout = 200 * time.Millisecond
)

// completionTriggers are the characters initialize advertises: "@" starts
// a reference to a file or folder, "/" at the start of a message one of
// the agent's commands.
var completionTriggers = []string{"@", "/"}

// completions answers the word at the cursor: after "@", the files and
// folders of the chat's session's working directories that match it
// fuzzily; a "/" word that starts the message, the session's commands.
// Anything else has no completions. The search runs outside the host's
// lock.
func (c *conn) completions(ctx context.Context, p *protocol.CompletionsParams) (*protocol.CompletionsResult, error) {
	if p.Kind != protocol.CompletionItemKindUserMessage {
		return nil, rpcError(protocol.CodeInvalidParams, "completions: unknown kind %q", clip(string(p.Kind), maxLoggedValue))
	}
	cur, ok := completion.ByteOffset(p.Text, int(p.Offset))
	if !ok {
		return nil, rpcError(protocol.CodeInvalidParams, "completions: offset %d is not a position in text (UTF-16 code units, 0 to %d, not inside a surrogate pair)", p.Offset, completion.UTF16Len(p.Text))
	}
	var (
		dirs []string
		cmds []command
	)
	err := c.h.locked(ctx, func(rd *storeReads) (change, error) {
		ch, err := c.h.channelLocked(rd, p.Channel)
		if err != nil {
			return nil, err
		}
		if ch == nil || ch.kind != protocol.ChannelChat || ch.session == nil {
			return nil, rpcError(protocol.CodeNotFound, "completions: no chat %s", clip(p.Channel, maxLoggedValue))
		}
		st := c.h.channels[ch.session.uri].state.(*protocol.SessionState)
		dirs = slices.Clone(st.WorkingDirectories)
		cmds = commandsOf(st.Customizations, nil)
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	w := completion.WordAt(p.Text, cur)
	items := []protocol.CompletionItem{}
	switch {
	case strings.HasPrefix(w.Text, "@"):
		items = fileItems(ctx, p.Text, w, dirs)
	case strings.HasPrefix(w.Text, "/") && w.First:
		items = commandItems(p.Text, w, cmds)
	}
	return &protocol.CompletionsResult{Items: items}, nil
}

// fileItems searches the working directories for w's query.
func fileItems(ctx context.Context, text string, w completion.Word, dirs []string) []protocol.CompletionItem {
	var roots []string
	for _, d := range dirs {
		if p, err := files.PathOf(d); err == nil {
			roots = append(roots, p)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	items := []protocol.CompletionItem{}
	for _, m := range completion.Find(ctx, roots, w.Text[1:], completionLimit) {
		insert := "@" + m.Rel
		kind := "document"
		if m.Dir {
			kind = "directory"
		}
		att := &protocol.MessageResourceAttachment{
			Label:       path.Base(m.Rel),
			URI:         files.URIOf(m.Path()),
			DisplayKind: &kind,
			Range:       finalRange(text, w, insert),
		}
		items = append(items, replacing(text, w, insert, att))
	}
	return items
}

// command is one of the agent's commands, without its "/".
type command struct {
	name, description string
}

// commandsOf collects the skills of the session's enabled plugin and
// directory customizations: ACP agents' commands are listed as skills
// named "/name".
func commandsOf(list []protocol.Customization, out []command) []command {
	for _, c := range list {
		var children []protocol.ChildCustomization
		switch c := c.(type) {
		case *protocol.PluginCustomization:
			if c.Enabled == nil || *c.Enabled {
				children = c.Children
			}
		case *protocol.DirectoryCustomization:
			if c.Enabled {
				children = c.Children
			}
		}
		for _, child := range children {
			if s, ok := child.(*protocol.SkillCustomization); ok {
				out = appendCommand(out, s)
			}
		}
	}
	return out
}

func appendCommand(out []command, s *protocol.SkillCustomization) []command {
	if s.Enabled != nil && !*s.Enabled {
		return out
	}
	name := strings.TrimPrefix(s.Name, "/")
	if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' }) {
		return out
	}
	var desc string
	if s.Description != nil {
		desc = *s.Description
	}
	return append(out, command{name: name, description: desc})
}

// commandItems matches w's query against the commands.
func commandItems(text string, w completion.Word, cmds []command) []protocol.CompletionItem {
	type scored struct {
		command
		score int
	}
	var found []scored
	for _, c := range cmds {
		if s, ok := completion.Score(w.Text[1:], c.name); ok {
			found = append(found, scored{c, s})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return b.score - a.score })
	items := []protocol.CompletionItem{}
	for _, c := range found[:min(len(found), completionLimit)] {
		insert := "/" + c.name
		name, _ := protocol.Marshal(c.name)
		att := &protocol.SimpleMessageAttachment{
			Label: insert,
			Range: finalRange(text, w, insert),
			Meta:  map[string]jsontext.Value{agent.CommandMetaKey: name},
		}
		items = append(items, replacing(text, w, insert, att))
	}
	return items
}

// replacing is the item that replaces the whole word w with insert.
func replacing(text string, w completion.Word, insert string, att protocol.MessageAttachment) protocol.CompletionItem {
	start := int64(completion.UTF16Len(text[:w.Start]))
	end := int64(completion.UTF16Len(text[:w.End]))
	return protocol.CompletionItem{InsertText: insert, RangeStart: &start, RangeEnd: &end, Attachment: att}
}

// finalRange is where insert sits in the message once it replaced w.
func finalRange(text string, w completion.Word, insert string) *protocol.TextRange {
	final := text[:w.Start] + insert + text[w.End:]
	sl, sc := completion.Position(final, w.Start)
	el, ec := completion.Position(final, w.Start+len(insert))
	return &protocol.TextRange{
		Start: protocol.TextPosition{Line: int64(sl), Character: int64(sc)},
		End:   protocol.TextPosition{Line: int64(el), Character: int64(ec)},
	}
}
