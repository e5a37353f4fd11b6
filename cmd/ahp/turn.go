package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// turnView prints one turn as it streams, from the successive states of
// its chat. It only ever appends: text already printed stays printed.
type turnView struct {
	a    *app
	scr  *screen
	id   string
	own  bool
	text map[int]int // bytes printed of each text part, by index

	tools    map[string]string // tool call ID -> last status shown
	asked    map[string]bool   // tool calls and input requests handed out
	usage    string            // usage last reported, as JSON
	finished bool

	// md renders markdown for the terminal; nil prints the text as it
	// streams. Rendered, a reply is printed a block at a time, once the
	// block is complete (a blank line outside a code fence ends it).
	md      func(string) string
	mdText  map[int]string // the latest text of each markdown part
	mdShown map[int]int    // bytes of it rendered and printed
}

func newTurnView(a *app, scr *screen, id string, own bool) *turnView {
	v := &turnView{a: a, scr: scr, id: id, own: own, text: map[int]int{},
		tools: map[string]string{}, asked: map[string]bool{}}
	if a.stdoutTTY && a.color && !a.g.json {
		v.md, v.mdText, v.mdShown = a.markdown(), map[int]string{}, map[int]int{}
	}
	return v
}

// blockEnd returns where the last complete markdown block of text ends
// (after a blank line outside a code fence), at or after from; from when
// there is none.
func blockEnd(text string, from int) int {
	end, fenced, pos := from, false, 0
	for pos < len(text) {
		nl := strings.IndexByte(text[pos:], '\n')
		if nl < 0 {
			break
		}
		line := strings.TrimSpace(text[pos : pos+nl])
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			fenced = !fenced
		}
		pos += nl + 1
		if !fenced && line == "" && pos > from && pos-1 > 0 {
			end = pos
		}
	}
	return end
}

// flushMarkdown prints the rest of each markdown part, rendered: the turn
// ended.
func (v *turnView) flushMarkdown() {
	for i := 0; i <= maxKey(v.mdText); i++ {
		text, ok := v.mdText[i]
		if !ok || v.mdShown[i] >= len(text) {
			continue
		}
		if rest := strings.TrimSpace(text[v.mdShown[i]:]); rest != "" {
			v.scr.write(i, v.md(rest))
		}
		v.mdShown[i] = len(text)
	}
}

func maxKey(m map[int]string) int {
	n := -1
	for k := range m {
		n = max(n, k)
	}
	return n
}

// question is something the agent waits for the user to answer.
type question struct {
	turnID string
	// A tool call to confirm, or an input request to answer.
	tool  *protocol.ToolCallPendingConfirmationState
	input *protocol.ChatInputRequest
}

// event writes one line of --json output.
func (v *turnView) event(typ string, fields map[string]any) {
	fields["type"] = typ
	fields["turnId"] = v.id
	v.a.printJSON(fields)
}

// write appends transcript text for part i.
func (v *turnView) write(i int, s string, dim bool) {
	if dim && v.scr.dim {
		s = "\x1b[2m" + s + "\x1b[0m"
	}
	v.scr.write(i, s)
}

// line writes a line of its own.
func (v *turnView) line(s string) { v.scr.line(s) }

// update prints what is new in the turn's parts and returns the questions
// not yet handed out.
func (v *turnView) update(parts []protocol.ResponsePart, usage *protocol.UsageInfo) []question {
	var qs []question
	for i, part := range parts {
		switch p := part.(type) {
		case *protocol.MarkdownResponsePart:
			v.textPart(i, "text", p.ID, p.Content.String(), false)
		case *protocol.ReasoningResponsePart:
			v.textPart(i, "reasoning", p.ID, p.Content.String(), true)
		case *protocol.ToolCallResponsePart:
			if q := v.tool(p.ToolCall); q != nil {
				qs = append(qs, *q)
			}
		case *protocol.InputRequestResponsePart:
			if p.Response == nil && !v.asked[p.Request.ID] {
				v.asked[p.Request.ID] = true
				if v.a.g.json {
					v.event("input", map[string]any{"request": p.Request})
				}
				qs = append(qs, question{turnID: v.id, input: &p.Request})
			}
		}
	}
	if usage != nil && v.a.g.json {
		if b, _ := protocol.Marshal(usage); string(b) != v.usage {
			v.usage = string(b)
			v.event("usage", map[string]any{"usage": usage})
		}
	}
	return qs
}

func (v *turnView) textPart(i int, kind, id, content string, dim bool) {
	done := v.text[i]
	if len(content) <= done {
		return
	}
	chunk := content[done:]
	v.text[i] = len(content)
	if v.a.g.json {
		v.event(kind, map[string]any{"partId": id, "text": chunk})
		return
	}
	if dim && !v.a.stdoutTTY {
		return // reasoning stays out of piped output
	}
	if kind == "text" && v.md != nil {
		v.mdText[i] = content
		if end := blockEnd(content, v.mdShown[i]); end > v.mdShown[i] {
			if block := strings.TrimSpace(content[v.mdShown[i]:end]); block != "" {
				v.scr.write(i, v.md(block)+"\n\n")
			}
			v.mdShown[i] = end
		}
		return
	}
	v.write(i, chunk, dim)
}

// tool reports a tool call's progress, and returns a question when it
// waits for confirmation.
func (v *turnView) tool(tc protocol.ToolCallState) *question {
	var id, name, status, msg string
	var q *question
	switch t := tc.(type) {
	case *protocol.ToolCallStreamingState:
		return nil
	case *protocol.ToolCallPendingConfirmationState:
		id, name, status, msg = t.ToolCallID, t.DisplayName, "pending-confirmation", t.InvocationMessage.String()+" (needs confirmation)"
		if !v.asked[id] {
			v.asked[id] = true
			q = &question{turnID: v.id, tool: t}
		}
	case *protocol.ToolCallRunningState:
		id, name, status, msg = t.ToolCallID, t.DisplayName, "running", t.InvocationMessage.String()
	case *protocol.ToolCallPendingResultConfirmationState:
		id, name, status, msg = t.ToolCallID, t.DisplayName, "pending-result-confirmation", t.InvocationMessage.String()
	case *protocol.ToolCallAuthRequiredState:
		id, name, status, msg = t.ToolCallID, t.DisplayName, "auth-required", "needs authentication"
	case *protocol.ToolCallCompletedState:
		id, name, status = t.ToolCallID, t.DisplayName, "completed"
		msg = "done: " + t.PastTenseMessage.String()
		if !t.Success {
			status, msg = "failed", "failed: "+t.PastTenseMessage.String()
			if t.Error != nil {
				msg = "failed: " + t.Error.Message
			}
		}
	case *protocol.ToolCallCancelledState:
		id, name, status, msg = t.ToolCallID, t.DisplayName, "cancelled", "cancelled"
	default:
		return nil
	}
	if v.tools[id] == status {
		return q
	}
	first := v.tools[id] == ""
	v.tools[id] = status
	if v.a.g.json {
		v.event("tool", map[string]any{"toolCallId": id, "name": name, "status": status, "message": msg})
		return q
	}
	if status == "running" && !first {
		return q // confirmed: the next line says how it ended
	}
	v.line(fmt.Sprintf("[tool] %s: %s", name, msg))
	return q
}

// finish prints the end of a completed turn and returns its error, if it
// did not complete.
func (v *turnView) finish(t *protocol.Turn) error {
	if v.finished {
		return nil
	}
	v.update(t.ResponseParts, t.Usage)
	v.finished = true
	if v.md != nil {
		v.flushMarkdown()
	}
	var err error
	switch t.State {
	case protocol.TurnStateError:
		msg := "the turn failed"
		if e := t.ErrorInfo(); e != nil {
			msg = e.Message
		}
		if n := len(t.ResponseParts); n > 0 {
			if e, ok := t.ResponseParts[n-1].(*protocol.ErrorResponsePart); ok && e.Resumable != nil && *e.Resumable {
				msg += " (the turn can be resumed)"
			}
		}
		err = &turnError{msg}
	case protocol.TurnStateCancelled:
		err = &turnError{"the turn was cancelled"}
	}
	if v.a.g.json {
		fields := map[string]any{"state": t.State, "text": replyOf(t.ResponseParts)}
		if e := t.ErrorInfo(); e != nil {
			fields["error"] = e
		}
		if t.Usage != nil {
			fields["usage"] = t.Usage
		}
		v.event("end", fields)
		return err
	}
	v.scr.endLine()
	return err
}

// replyOf returns the markdown text of a turn.
func replyOf(parts []protocol.ResponsePart) string {
	var b strings.Builder
	for _, p := range parts {
		if md, ok := p.(*protocol.MarkdownResponsePart); ok {
			b.WriteString(md.Content.String())
		}
	}
	return b.String()
}

// answerText parses what the user typed for one input question.
func answerText(q protocol.ChatInputQuestion, line string) (protocol.ChatInputAnswerValue, error) {
	line = strings.TrimSpace(line)
	switch q := q.(type) {
	case *protocol.ChatInputTextQuestion:
		return &protocol.ChatInputTextAnswerValue{Value: line}, nil
	case *protocol.ChatInputNumberQuestion:
		n, err := strconv.ParseFloat(line, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", line)
		}
		return &protocol.ChatInputNumberAnswerValue{Value: n}, nil
	case *protocol.ChatInputBooleanQuestion:
		return &protocol.ChatInputBooleanAnswerValue{Value: yes(line)}, nil
	case *protocol.ChatInputSingleSelectQuestion:
		id, err := pick(q.Options, line)
		if err != nil {
			return nil, err
		}
		return &protocol.ChatInputSelectedAnswerValue{Value: id}, nil
	case *protocol.ChatInputMultiSelectQuestion:
		var ids []string
		for f := range strings.FieldsFuncSeq(line, func(r rune) bool { return r == ',' || r == ' ' }) {
			id, err := pick(q.Options, f)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return &protocol.ChatInputSelectedManyAnswerValue{Value: ids}, nil
	}
	return nil, fmt.Errorf("cannot answer a %s question here", q.Kind())
}

// pick chooses an option by number (from 1) or by ID.
func pick(opts []protocol.ChatInputOption, s string) (string, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(opts) {
		return opts[n-1].ID, nil
	}
	for _, o := range opts {
		if o.ID == s || strings.EqualFold(o.Label, s) {
			return o.ID, nil
		}
	}
	return "", fmt.Errorf("%q is not one of the choices", s)
}

func yes(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes", "true", "1":
		return true
	}
	return false
}

// questionPrompt returns what to ask for one input question.
func questionPrompt(q protocol.ChatInputQuestion) string {
	var msg string
	var opts []protocol.ChatInputOption
	switch q := q.(type) {
	case *protocol.ChatInputTextQuestion:
		msg = q.Message
	case *protocol.ChatInputNumberQuestion:
		msg = q.Message + " (a number)"
	case *protocol.ChatInputBooleanQuestion:
		msg = q.Message + " [y/n]"
	case *protocol.ChatInputSingleSelectQuestion:
		msg, opts = q.Message, q.Options
	case *protocol.ChatInputMultiSelectQuestion:
		msg, opts = q.Message+" (numbers, separated by commas)", q.Options
	default:
		return q.Kind() + "?"
	}
	var b strings.Builder
	b.WriteString(msg)
	for i, o := range opts {
		fmt.Fprintf(&b, "\n  %d. %s", i+1, o.Label)
	}
	b.WriteString("\n> ")
	return b.String()
}

func questionID(q protocol.ChatInputQuestion) string {
	switch q := q.(type) {
	case *protocol.ChatInputTextQuestion:
		return q.ID
	case *protocol.ChatInputNumberQuestion:
		return q.ID
	case *protocol.ChatInputBooleanQuestion:
		return q.ID
	case *protocol.ChatInputSingleSelectQuestion:
		return q.ID
	case *protocol.ChatInputMultiSelectQuestion:
		return q.ID
	}
	return ""
}
