package acp

import (
	"encoding/base64"
	"net/url"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

// blockText returns the text of a text block, or of an embedded text
// resource. Like update kinds, content blocks whose type the SDK does not
// know come out as the variant whose fields match; their type field tells.
func blockText(b acpsdk.ContentBlock) (string, bool) {
	switch {
	case b.Text != nil && b.Text.Type == "text":
		return b.Text.Text, true
	case b.Resource != nil && b.Resource.Type == "resource" && b.Resource.Resource.TextResourceContents != nil:
		r := b.Resource.Resource.TextResourceContents
		return "\n```\n" + r.Text + "\n```\n", true
	}
	return "", false
}

// blockKind returns the type a content block names.
func blockKind(b acpsdk.ContentBlock) string {
	switch {
	case b.Text != nil:
		return b.Text.Type
	case b.Image != nil:
		return b.Image.Type
	case b.Audio != nil:
		return b.Audio.Type
	case b.ResourceLink != nil:
		return b.ResourceLink.Type
	case b.Resource != nil:
		return b.Resource.Type
	}
	return "empty"
}

// toolContent maps a tool call's ACP content to AHP tool result content.
// Unknown kinds are skipped.
func (s *session) toolContent(in []acpsdk.ToolCallContent) []protocol.ToolResultContent {
	out := make([]protocol.ToolResultContent, 0, len(in))
	for _, c := range in {
		switch {
		case c.Content != nil && c.Content.Type == "content":
			if r := blockResult(c.Content.Content); r != nil {
				out = append(out, r)
			} else {
				s.warnOnceLocked("toolcontent:"+blockKind(c.Content.Content), "dropping tool call content of an unknown kind", "content", blockKind(c.Content.Content))
			}
		case c.Diff != nil && c.Diff.Type == "diff":
			old, existed := "", c.Diff.OldText != nil
			if existed {
				old = *c.Diff.OldText
			}
			out = append(out, fileEdit(c.Diff.Path, old, existed, c.Diff.NewText))
		case c.Terminal != nil && c.Terminal.Type == "terminal":
			// The ACP terminal id is the AHP terminal's URI (terminal.go).
			out = append(out, &protocol.ToolResultTerminalContent{Resource: c.Terminal.TerminalId, Title: "Terminal", IsPty: protocol.Ptr(true)})
		default:
			s.warnOnceLocked("toolcontent:unknown", "dropping tool call content of an unknown kind")
		}
	}
	return out
}

// blockResult maps a content block to tool result content, or nil.
func blockResult(b acpsdk.ContentBlock) protocol.ToolResultContent {
	switch {
	case b.Text != nil && b.Text.Type == "text":
		return &protocol.ToolResultTextContent{Text: b.Text.Text}
	case b.Image != nil && b.Image.Type == "image":
		return &protocol.ToolResultEmbeddedResourceContent{Data: b.Image.Data, ContentType: b.Image.MimeType}
	case b.Audio != nil && b.Audio.Type == "audio":
		return &protocol.ToolResultEmbeddedResourceContent{Data: b.Audio.Data, ContentType: b.Audio.MimeType}
	case b.ResourceLink != nil && b.ResourceLink.Type == "resource_link":
		l := b.ResourceLink
		r := &protocol.ToolResultResourceContent{URI: l.Uri, ContentType: l.MimeType}
		if l.Size != nil {
			r.SizeHint = protocol.Ptr(int64(*l.Size))
		}
		return r
	case b.Resource != nil && b.Resource.Type == "resource":
		switch r := b.Resource.Resource; {
		case r.TextResourceContents != nil:
			return &protocol.ToolResultTextContent{Text: r.TextResourceContents.Text}
		case r.BlobResourceContents != nil:
			ct := "application/octet-stream"
			if r.BlobResourceContents.MimeType != nil {
				ct = *r.BlobResourceContents.MimeType
			}
			return &protocol.ToolResultEmbeddedResourceContent{Data: r.BlobResourceContents.Blob, ContentType: ct}
		}
	}
	return nil
}

// inlineLimit is the largest file content a file edit carries inline, as a
// data: URI. Larger contents are referenced by the file's URI.
const inlineLimit = 32 << 10

// fileEdit describes a change of the file at path from old (when it
// existed) to new.
func fileEdit(path, old string, existed bool, new string) *protocol.ToolResultFileEditContent {
	uri := fileURI(path)
	added, removed := lineDiff(old, new)
	e := &protocol.ToolResultFileEditContent{
		After: &protocol.FileEditSide{URI: uri, Content: contentRef(uri, new)},
		Diff:  &protocol.FileEditDiffStats{Added: protocol.Ptr(int64(added)), Removed: protocol.Ptr(int64(removed))},
	}
	if existed {
		e.Before = &protocol.FileEditSide{URI: uri, Content: contentRef(uri, old)}
	}
	return e
}

// contentRef refers to text: inline as a data: URI when it is small, else
// by the file's URI.
func contentRef(uri, text string) protocol.ContentRef {
	ref := protocol.ContentRef{URI: uri, SizeHint: protocol.Ptr(int64(len(text))), ContentType: protocol.Ptr("text/plain")}
	if len(text) <= inlineLimit {
		ref.URI = "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(text))
	}
	return ref
}

// lineDiff counts the lines added and removed between two texts, as a
// multiset difference of their lines: cheap, and exact for the common edit
// that adds, removes or replaces whole lines.
func lineDiff(old, new string) (added, removed int) {
	count := map[string]int{}
	for l := range strings.Lines(old) {
		count[strings.TrimSuffix(l, "\n")]++
	}
	for l := range strings.Lines(new) {
		k := strings.TrimSuffix(l, "\n")
		if count[k] > 0 {
			count[k]--
		} else {
			added++
		}
	}
	for _, n := range count {
		removed += n
	}
	return added, removed
}

// turnContext is what the host resolved for a turn beyond its message: a
// steering message it consumed, and the transcripts of chat attachments.
type turnContext struct {
	steering    *protocol.Message
	transcripts []agent.Transcript
	client      string // the client that started the turn ("" for the host)
}

// promptBlocks builds the ACP prompt of an AHP message: its text, then its
// attachments, each in the richest form the agent accepts (a chat
// attachment as the transcript the host resolved), then a steering message
// the host consumed for the turn.
func promptBlocks(caps acpsdk.PromptCapabilities, m protocol.Message, tc turnContext) []acpsdk.ContentBlock {
	var blocks []acpsdk.ContentBlock
	if m.Text != "" {
		blocks = append(blocks, acpsdk.TextBlock(m.Text))
	}
	transcripts := tc.transcripts
	for _, att := range m.Attachments {
		switch a := att.(type) {
		case *protocol.MessageChatAttachment:
			tr := agent.Transcript{Attachment: a}
			if len(transcripts) > 0 && transcripts[0].Attachment == a {
				tr, transcripts = transcripts[0], transcripts[1:]
			}
			blocks = append(blocks, acpsdk.TextBlock(agent.TranscriptText(tr)))
		case *protocol.SimpleMessageAttachment:
			if _, ok := a.Meta[agent.CommandMetaKey]; ok {
				continue // a completed slash command: the text holds it
			}
			text := a.Label
			if a.ModelRepresentation != nil {
				text = *a.ModelRepresentation
			}
			blocks = append(blocks, acpsdk.TextBlock(text))
		case *protocol.MessageResourceAttachment:
			b := acpsdk.ResourceLinkBlock(a.Label, a.URI)
			b.ResourceLink.MimeType = a.ContentType
			if a.SizeHint != nil {
				b.ResourceLink.Size = protocol.Ptr(int(*a.SizeHint))
			}
			blocks = append(blocks, b)
		case *protocol.MessageEmbeddedResourceAttachment:
			blocks = append(blocks, embeddedBlock(caps, a))
		}
	}
	if st := tc.steering; st != nil {
		blocks = append(blocks, acpsdk.TextBlock("The user adds, to steer this turn:"))
		blocks = append(blocks, promptBlocks(caps, *st, turnContext{})...)
	}
	if len(blocks) == 0 {
		blocks = append(blocks, acpsdk.TextBlock(""))
	}
	return blocks
}

// embeddedBlock sends an inline attachment as an image, an embedded
// resource, or (to an agent that takes neither) text.
func embeddedBlock(caps acpsdk.PromptCapabilities, a *protocol.MessageEmbeddedResourceAttachment) acpsdk.ContentBlock {
	ct := a.ContentType
	uri := "attachment:" + url.PathEscape(a.Label)
	isText := strings.HasPrefix(ct, "text/") || strings.Contains(ct, "json") || strings.Contains(ct, "xml")
	var text string
	if isText {
		b, err := base64.StdEncoding.DecodeString(a.Data)
		if err != nil {
			isText = false
		} else {
			text = string(b)
		}
	}
	switch {
	case strings.HasPrefix(ct, "image/") && caps.Image:
		return acpsdk.ImageBlock(a.Data, ct)
	case caps.EmbeddedContext && isText:
		return acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{TextResourceContents: &acpsdk.TextResourceContents{Uri: uri, Text: text, MimeType: &ct}})
	case caps.EmbeddedContext:
		return acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{BlobResourceContents: &acpsdk.BlobResourceContents{Uri: uri, Blob: a.Data, MimeType: &ct}})
	case isText:
		return acpsdk.TextBlock(a.Label + ":\n" + text)
	}
	return acpsdk.TextBlock("[" + a.Label + " (" + ct + ") is attached, but this agent does not accept such attachments]")
}

// URIs of the customizations that stand for ACP modes and commands.
const (
	modeURIPrefix    = "acp:mode/"
	commandURIPrefix = "acp:command/"
)

// modeOfURI returns the mode an agent selection names.
func modeOfURI(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, modeURIPrefix)
	if !ok {
		return "", false
	}
	id, err := url.PathUnescape(rest)
	return id, err == nil && id != ""
}

// modesCustomization lists ACP session modes as AHP agents, in a plugin
// container: a message selects one with Message.agent.uri.
func modesCustomization(modes []acpsdk.SessionMode) *protocol.PluginCustomization {
	children := make([]protocol.ChildCustomization, 0, len(modes))
	for _, m := range modes {
		children = append(children, &protocol.AgentCustomization{
			ID:          "acp-mode-" + string(m.Id),
			URI:         modeURIPrefix + url.PathEscape(string(m.Id)),
			Name:        m.Name,
			Description: m.Description,
		})
	}
	return &protocol.PluginCustomization{ID: "acp-modes", URI: "acp:modes", Name: "Modes", Enabled: protocol.Ptr(true),
		Load: &protocol.CustomizationLoadedState{}, Children: children}
}

// commandsCustomization lists the agent's slash commands as skills.
func commandsCustomization(cmds []acpsdk.AvailableCommand) *protocol.PluginCustomization {
	children := make([]protocol.ChildCustomization, 0, len(cmds))
	for _, c := range cmds {
		desc := c.Description
		children = append(children, &protocol.SkillCustomization{
			ID:          "acp-command-" + c.Name,
			URI:         commandURIPrefix + url.PathEscape(c.Name),
			Name:        "/" + c.Name,
			Description: &desc,
		})
	}
	return &protocol.PluginCustomization{ID: "acp-commands", URI: "acp:commands", Name: "Commands", Enabled: protocol.Ptr(true),
		Load: &protocol.CustomizationLoadedState{}, Children: children}
}
