package agent

import (
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// TranscriptText renders a transcript as plain text for a model: a line
// naming the attached chat, then each turn's user message and the agent's
// reply (its markdown parts). Chat attachments of those messages are named,
// never expanded.
func TranscriptText(tr Transcript) string {
	var b strings.Builder
	label, uri := "", ""
	if tr.Attachment != nil {
		label, uri = tr.Attachment.Label, tr.Attachment.Resource
	}
	b.WriteString("Attached chat ")
	b.WriteString(strings.TrimSpace(label + " <" + uri + ">"))
	if len(tr.Turns) == 0 {
		b.WriteString(" (no completed turns)\n")
		return b.String()
	}
	b.WriteString(":\n")
	for _, t := range tr.Turns {
		b.WriteString("\nUser: ")
		b.WriteString(t.Message.Text)
		b.WriteByte('\n')
		for _, att := range t.Message.Attachments {
			if c, ok := att.(*protocol.MessageChatAttachment); ok {
				b.WriteString("[attached chat " + c.Label + " <" + c.Resource + ">]\n")
			}
		}
		var reply strings.Builder
		for _, part := range t.ResponseParts {
			if md, ok := part.(*protocol.MarkdownResponsePart); ok {
				reply.WriteString(md.Content.String())
			}
		}
		if reply.Len() > 0 {
			b.WriteString("Assistant: ")
			b.WriteString(reply.String())
			b.WriteByte('\n')
		}
	}
	return b.String()
}
