package acp

import (
	"context"
	"encoding/json"
	"slices"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// Tool calls.
//
// The bridge mirrors each ACP tool call of a turn in a tool value and
// moves the AHP tool call through its states as updates come:
//
//	ACP                               AHP
//	tool_call (pending)               chat/toolCallStart (streaming)
//	status in_progress                chat/toolCallReady, confirmed not-needed (running)
//	status completed / failed         chat/toolCallComplete, success true / false
//	content while running             chat/toolCallContentChanged
//	title while streaming             chat/toolCallDelta (invocation message)
//	session/request_permission        chat/toolCallReady without confirmed (pending-confirmation)
//
// The first of tool_call, tool_call_update or a permission request to name
// a tool call id creates the AHP tool call: they can come in any order.
// The kind becomes the tool name and, when it is one of ACP's own kinds
// other than "other", the display name ("Edit", "Run"...); the title
// becomes the invocation and past-tense messages, which follow the title
// as tool_call_update changes it (AHP cannot rename a started tool call,
// and agents often start one with a placeholder title such as "Preparing
// file…"). A tool call of kind "other" is displayed by its first title.
// rawInput becomes the tool input, rawOutput (an object) the structured
// result, and the locations go in _meta.

type toolStatus int

const (
	toolStreaming toolStatus = iota
	toolPending              // waiting for a client to confirm
	toolRunning
	toolDone // completed or cancelled: later updates are ignored
)

type tool struct {
	id        string
	status    toolStatus
	title     string
	kind      string
	input     *string
	content   []protocol.ToolResultContent
	edits     []protocol.ToolResultContent // file writes made while it ran
	locations []acpsdk.ToolCallLocation
	output    map[string]jsontext.Value
}

// toolFields are the fields an ACP tool call update may carry; nil (or
// has* false) means absent.
type toolFields struct {
	title        *string
	kind         *acpsdk.ToolKind
	status       *acpsdk.ToolCallStatus
	content      []acpsdk.ToolCallContent
	hasContent   bool
	locations    []acpsdk.ToolCallLocation
	hasLocations bool
	rawInput     any
	rawOutput    any
}

func fieldsOfToolCall(u *acpsdk.SessionUpdateToolCall) toolFields {
	f := toolFields{title: &u.Title, content: u.Content, hasContent: u.Content != nil,
		locations: u.Locations, hasLocations: u.Locations != nil, rawInput: u.RawInput, rawOutput: u.RawOutput}
	if u.Kind != "" {
		f.kind = &u.Kind
	}
	status := acpsdk.ToolCallStatusPending
	if u.Status != "" {
		status = u.Status
	}
	f.status = &status
	return f
}

func fieldsOfToolUpdate(u *acpsdk.SessionToolCallUpdate) toolFields {
	return toolFields{title: u.Title, kind: u.Kind, status: u.Status, content: u.Content, hasContent: u.Content != nil,
		locations: u.Locations, hasLocations: u.Locations != nil, rawInput: u.RawInput, rawOutput: u.RawOutput}
}

func fieldsOfPermission(u *acpsdk.ToolCallUpdate) toolFields {
	return toolFields{title: u.Title, kind: u.Kind, status: u.Status, content: u.Content, hasContent: u.Content != nil,
		locations: u.Locations, hasLocations: u.Locations != nil, rawInput: u.RawInput, rawOutput: u.RawOutput}
}

// merge takes in the fields an update carries. It reports whether the
// title and the content changed.
func (s *session) merge(tc *tool, f toolFields) (titleChanged, contentChanged bool) {
	if f.title != nil && *f.title != "" && *f.title != tc.title {
		tc.title, titleChanged = *f.title, true
	}
	if f.kind != nil && *f.kind != "" {
		tc.kind = string(*f.kind)
	}
	if f.hasLocations {
		tc.locations = f.locations
	}
	if f.rawInput != nil {
		if b, err := json.Marshal(f.rawInput); err == nil {
			tc.input = protocol.Ptr(string(b))
		}
	}
	if f.rawOutput != nil {
		if b, err := json.Marshal(f.rawOutput); err == nil {
			var m map[string]jsontext.Value
			if json.Unmarshal(b, &m) == nil {
				tc.output = m
			} else {
				tc.output = map[string]jsontext.Value{"value": jsontext.Value(b)}
			}
		}
	}
	if f.hasContent {
		tc.content, contentChanged = s.toolContent(f.content), true
	}
	return titleChanged, contentChanged
}

// kindNames are the display names of ACP's tool kinds.
var kindNames = map[acpsdk.ToolKind]string{
	acpsdk.ToolKindRead:       "Read",
	acpsdk.ToolKindEdit:       "Edit",
	acpsdk.ToolKindDelete:     "Delete",
	acpsdk.ToolKindMove:       "Move",
	acpsdk.ToolKindSearch:     "Search",
	acpsdk.ToolKindExecute:    "Run",
	acpsdk.ToolKindThink:      "Think",
	acpsdk.ToolKindFetch:      "Fetch",
	acpsdk.ToolKindSwitchMode: "Switch mode",
}

// displayName is the tool call's name as AHP shows it, fixed when it
// starts: its kind's name, else its title.
func (tc *tool) displayName() string {
	if n, ok := kindNames[acpsdk.ToolKind(tc.kind)]; ok {
		return n
	}
	return tc.displayTitle()
}

func (tc *tool) displayTitle() string {
	if tc.title != "" {
		return tc.title
	}
	return tc.kind
}

func (tc *tool) allContent() []protocol.ToolResultContent {
	if len(tc.edits) == 0 {
		return tc.content
	}
	return append(slices.Clip(tc.content), tc.edits...)
}

func (tc *tool) meta() map[string]jsontext.Value {
	if len(tc.locations) == 0 {
		return nil
	}
	type loc struct {
		URI  string `json:"uri"`
		Line *int   `json:"line,omitempty"`
	}
	locs := make([]loc, 0, len(tc.locations))
	for _, l := range tc.locations {
		locs = append(locs, loc{URI: fileURI(l.Path), Line: l.Line})
	}
	return metaOf("locations", locs)
}

// toolCall applies a tool_call or tool_call_update (or, with permission
// set, the tool call a permission request describes, whose status is not
// applied). It returns the tool, or nil when the turn has ended.
func (s *session) toolCall(t *turn, id string, f toolFields, permission bool) *tool {
	tc := t.tools[id]
	created := false
	var titleChanged, contentChanged bool
	if tc == nil {
		tc = &tool{id: id, kind: string(acpsdk.ToolKindOther)}
		titleChanged, contentChanged = s.merge(tc, f)
		if !s.emit(t, &protocol.ChatToolCallStartAction{TurnID: t.id, ToolCallID: id,
			ToolName: tc.kind, DisplayName: tc.displayName(), Meta: tc.meta(), Contributor: s.mcpContributor(tc.title)}) {
			return nil
		}
		t.tools[id] = tc
		t.textPart, t.thoughtPart = "", ""
		created = true
	} else {
		titleChanged, contentChanged = s.merge(tc, f)
	}
	if tc.status == toolDone || permission {
		return tc
	}
	status := acpsdk.ToolCallStatus("")
	if f.status != nil {
		status = *f.status
	}
	switch status {
	case acpsdk.ToolCallStatusInProgress:
		if tc.status == toolStreaming {
			s.ready(t, tc, true)
		}
	case acpsdk.ToolCallStatusCompleted, acpsdk.ToolCallStatusFailed:
		if tc.status == toolStreaming {
			s.ready(t, tc, true)
		}
		s.complete(t, tc, status == acpsdk.ToolCallStatusCompleted)
		return tc
	}
	switch {
	case tc.status == toolStreaming && (created || titleChanged) && tc.title != "":
		s.emit(t, &protocol.ChatToolCallDeltaAction{TurnID: t.id, ToolCallID: id, InvocationMessage: protocol.Ptr(protocol.PlainText(tc.title)), Meta: tc.meta()})
	case tc.status == toolRunning && contentChanged:
		s.emit(t, &protocol.ChatToolCallContentChangedAction{TurnID: t.id, ToolCallID: id, Content: tc.allContent(), Meta: tc.meta()})
	}
	return tc
}

// ready settles a tool call's parameters: running at once when
// autoConfirmed, else waiting for confirmation (the caller adds the
// options).
func (s *session) ready(t *turn, tc *tool, autoConfirmed bool) {
	a := &protocol.ChatToolCallReadyAction{TurnID: t.id, ToolCallID: tc.id,
		InvocationMessage: protocol.PlainText(tc.displayTitle()), Meta: tc.meta(), Contributor: s.mcpContributor(tc.title)}
	if tc.input != nil {
		a.ToolInput = protocol.Ptr(protocol.InlineToolInput(*tc.input))
	}
	if autoConfirmed {
		a.Confirmed = protocol.Ptr(protocol.ToolCallConfirmationReasonNotNeeded)
		if s.emit(t, a) {
			tc.status = toolRunning
			if len(tc.allContent()) > 0 {
				s.emit(t, &protocol.ChatToolCallContentChangedAction{TurnID: t.id, ToolCallID: tc.id, Content: tc.allContent()})
			}
		}
	}
}

// complete ends a tool call with its result.
func (s *session) complete(t *turn, tc *tool, success bool) {
	res := protocol.ToolCallResult{
		Success:           success,
		PastTenseMessage:  protocol.PlainText(tc.displayTitle()),
		Content:           tc.allContent(),
		StructuredContent: tc.output,
	}
	if !success {
		msg := "The tool call failed."
		for _, c := range tc.content {
			if tx, ok := c.(*protocol.ToolResultTextContent); ok && tx.Text != "" {
				msg = tx.Text
				break
			}
		}
		res.Error = &protocol.ToolCallResultError{Message: msg}
	}
	s.emit(t, &protocol.ChatToolCallCompleteAction{TurnID: t.id, ToolCallID: tc.id, Result: res, Meta: tc.meta()})
	tc.status = toolDone
}

// permission is a session/request_permission waiting for a client.
type permission struct {
	options []acpsdk.PermissionOption
	reply   chan acpsdk.RequestPermissionOutcome // buffered: answering never blocks
}

func (p *permission) answer(o acpsdk.RequestPermissionOutcome) {
	select {
	case p.reply <- o:
	default:
	}
}

// RequestPermission shows the tool call as waiting for confirmation, which
// any client may give; the first answer wins (the host rejects the
// others). The chosen option goes back to the agent; a turn that ends
// first answers "cancelled", as ACP asks.
func (c *client) RequestPermission(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	s := c.s
	cancelled := acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}
	s.mu.Lock()
	ch := s.byACP[acpKey{c.p.gen, req.SessionId}]
	if ch == nil || ch.running == nil || ch.running.ended || s.closed {
		s.mu.Unlock()
		return cancelled, nil
	}
	t := ch.running
	id := string(req.ToolCall.ToolCallId)
	tc := s.toolCall(t, id, fieldsOfPermission(&req.ToolCall), true)
	if tc == nil || tc.status == toolDone {
		s.mu.Unlock()
		return cancelled, nil
	}
	if old := t.perms[id]; old != nil {
		old.answer(acpsdk.NewRequestPermissionOutcomeCancelled())
	}
	p := &permission{options: req.Options, reply: make(chan acpsdk.RequestPermissionOutcome, 1)}
	a := &protocol.ChatToolCallReadyAction{TurnID: t.id, ToolCallID: id,
		InvocationMessage: protocol.PlainText(tc.displayTitle()),
		ConfirmationTitle: protocol.Ptr(protocol.PlainText("Allow " + tc.displayTitle() + "?")),
		Options:           confirmationOptions(req.Options),
		Meta:              tc.meta(),
		Contributor:       s.mcpContributor(tc.title),
	}
	if tc.input != nil {
		a.ToolInput = protocol.Ptr(protocol.InlineToolInput(*tc.input))
	}
	if !s.emit(t, a) {
		s.mu.Unlock()
		return cancelled, nil
	}
	tc.status = toolPending
	t.perms[id] = p
	s.mu.Unlock()

	select {
	case o := <-p.reply:
		return acpsdk.RequestPermissionResponse{Outcome: o}, nil
	case <-ctx.Done():
		// The agent withdrew the request, or went away.
		s.mu.Lock()
		if t.perms[id] == p {
			delete(t.perms, id)
		}
		s.mu.Unlock()
		return cancelled, nil
	}
}

// confirmationOptions maps ACP permission options to AHP confirmation
// options, allowing ones first.
func confirmationOptions(opts []acpsdk.PermissionOption) []protocol.ConfirmationOption {
	out := make([]protocol.ConfirmationOption, 0, len(opts))
	for _, o := range opts {
		kind, group := protocol.ConfirmationOptionKindApprove, 0.0
		if isReject(o.Kind) {
			kind, group = protocol.ConfirmationOptionKindDeny, 1
		}
		out = append(out, protocol.ConfirmationOption{ID: string(o.OptionId), Label: o.Name, Kind: kind, Group: protocol.Ptr(group)})
	}
	return out
}

func isReject(k acpsdk.PermissionOptionKind) bool {
	return k == acpsdk.PermissionOptionKindRejectOnce || k == acpsdk.PermissionOptionKindRejectAlways
}

// confirmed passes a client's answer to the permission request that waits
// for it.
func (s *session) confirmed(chatURI string, a *protocol.ChatToolCallConfirmedAction) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatURI]
	if c == nil || c.running == nil || c.running.id != a.TurnID {
		return
	}
	t := c.running
	p := t.perms[a.ToolCallID]
	if p == nil {
		return
	}
	delete(t.perms, a.ToolCallID)
	if tc := t.tools[a.ToolCallID]; tc != nil {
		if a.Approved {
			tc.status = toolRunning
		} else {
			tc.status = toolDone
		}
	}
	p.answer(chooseOption(p.options, a))
}

// chooseOption picks the ACP option for a client's answer: the option it
// selected when that agrees with approving or denying, else the first
// "once" option of the right kind, else any of that kind. With none, the
// request is answered as cancelled.
func chooseOption(opts []acpsdk.PermissionOption, a *protocol.ChatToolCallConfirmedAction) acpsdk.RequestPermissionOutcome {
	fits := func(o acpsdk.PermissionOption) bool { return isReject(o.Kind) != a.Approved }
	if a.SelectedOptionID != nil {
		for _, o := range opts {
			if string(o.OptionId) == *a.SelectedOptionID && fits(o) {
				return acpsdk.NewRequestPermissionOutcomeSelected(o.OptionId)
			}
		}
	}
	for _, once := range []bool{true, false} {
		for _, o := range opts {
			isOnce := o.Kind == acpsdk.PermissionOptionKindAllowOnce || o.Kind == acpsdk.PermissionOptionKindRejectOnce
			if fits(o) && isOnce == once {
				return acpsdk.NewRequestPermissionOutcomeSelected(o.OptionId)
			}
		}
	}
	return acpsdk.NewRequestPermissionOutcomeCancelled()
}
