package reducer

import (
	"cmp"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// This file holds the tool call state machine of the chat reducer
// (state-model.md, "Tool Call Lifecycle"). Each tool call action is a
// function from the tool call's current state to its next one, returning
// nil where the action does not apply; chatUpdateToolCall finds the tool
// call and rebuilds the chat around the result. The transitions:
//
//	streaming            ready           → pending-confirmation, or running when confirmed
//	pending-confirmation ready           → pending-confirmation (details updated)
//	                     confirmed       → running, or cancelled when denied
//	                     complete        → completed (it needed no confirmation)
//	running              ready           → pending-confirmation (re-confirmation)
//	                     contentChanged  → running
//	                     authRequired    → auth-required (MCP tools only)
//	                     complete        → completed, or pending-result-confirmation
//	auth-required        authResolved    → running
//	                     complete        → completed (failed results only)
//	pending-result-conf. resultConfirmed → completed, or cancelled when denied
//
// When the turn ends, every tool call not completed or cancelled is
// cancelled as skipped.

// chatToolCallStart adds a streaming tool call to the active turn.
func chatToolCallStart(s *protocol.ChatState, a *protocol.ChatToolCallStartAction) *protocol.ChatState {
	t := chatActiveTurn(s, a.TurnID)
	if t == nil {
		return s
	}
	tc := &protocol.ToolCallStreamingState{
		ToolCallID:  a.ToolCallID,
		ToolName:    a.ToolName,
		DisplayName: a.DisplayName,
		Intention:   a.Intention,
		Contributor: a.Contributor,
		Meta:        a.Meta,
	}
	return chatWithActiveTurn(s, chatTurnWithAddedPart(t, &protocol.ToolCallResponsePart{ToolCall: tc}))
}

// chatUpdateToolCall replaces each tool call of the active turn whose id is
// toolCallID by next(tool call, a), unless that is nil, and derives the
// chat's status again: a tool call waiting on the user makes the chat need
// input. It returns s itself when no tool call changes.
func chatUpdateToolCall[A any](s *protocol.ChatState, turnID, toolCallID string, a A, next func(protocol.ToolCallState, A) protocol.ToolCallState) *protocol.ChatState {
	t := chatActiveTurn(s, turnID)
	if t == nil {
		return s
	}
	var parts []protocol.ResponsePart
	for i, p := range t.ResponseParts {
		tp, ok := p.(*protocol.ToolCallResponsePart)
		if !ok {
			continue
		}
		if b, ok := toolCallBaseOf(tp.ToolCall); !ok || b.ToolCallID != toolCallID {
			continue
		}
		tc := next(tp.ToolCall, a)
		if tc == nil {
			continue
		}
		if parts == nil {
			parts = slices.Clone(t.ResponseParts)
		}
		parts[i] = &protocol.ToolCallResponsePart{ToolCall: tc}
	}
	if parts == nil {
		return s
	}
	ns := s.Clone()
	ns.ActiveTurn = chatTurnWithParts(t, parts)
	ns.Status = chatWithActivity(s.Status, chatActivity(ns))
	return ns
}

// toolCallDelta updates a streaming tool call: partial input grows by the
// action's content, and the invocation message and _meta are replaced when
// the action has them.
func toolCallDelta(tc protocol.ToolCallState, a *protocol.ChatToolCallDeltaAction) protocol.ToolCallState {
	v, ok := tc.(*protocol.ToolCallStreamingState)
	if !ok {
		return nil
	}
	n := *v
	n.Meta = chatMetaOr(a.Meta, v.Meta)
	if a.Content != nil {
		var prefix protocol.Text
		if v.PartialInput != nil {
			prefix = *v.PartialInput
		}
		n.PartialInput = protocol.Ptr(prefix.Append(*a.Content))
	}
	if a.InvocationMessage != nil {
		n.InvocationMessage = a.InvocationMessage
	}
	return &n
}

// toolCallReady settles the parameters of a streaming tool call, or asks
// again for confirmation of a running one (or updates one already waiting
// for it). With a confirmation reason the tool call runs at once; without
// one it waits for confirmation, keeping the confirmation details of an
// earlier ready that this one leaves out. The tool input, once known, stays
// unless the action replaces it.
//
// The action may refine the intention and the contributor, but never so as
// to change which client executes the tool (chat-channel.md, "Tool call
// metadata refinement"): see refineContributor.
func toolCallReady(tc protocol.ToolCallState, a *protocol.ChatToolCallReadyAction) protocol.ToolCallState {
	var input *protocol.ToolInput
	var prev *protocol.ToolCallPendingConfirmationState
	switch v := tc.(type) {
	case *protocol.ToolCallStreamingState:
	case *protocol.ToolCallRunningState:
		input = v.ToolInput
	case *protocol.ToolCallPendingConfirmationState:
		input, prev = v.ToolInput, v
	default:
		return nil
	}
	b, _ := toolCallBaseOf(tc)
	b.Meta = chatMetaOr(a.Meta, b.Meta)
	b.Contributor = refineContributor(b.Contributor, a.Contributor)
	if a.Intention != nil {
		b.Intention = a.Intention
	}
	if a.ToolInput != nil {
		input = a.ToolInput
	}
	if a.Confirmed != nil {
		n := b.running()
		n.InvocationMessage = a.InvocationMessage
		n.ToolInput = input
		n.Confirmed = *a.Confirmed
		return n
	}
	n := b.pendingConfirmation()
	n.InvocationMessage = a.InvocationMessage
	n.ToolInput = input
	n.ConfirmationTitle = a.ConfirmationTitle
	n.RiskAssessment = a.RiskAssessment
	n.Edits = (*protocol.FileEditCollection)(a.Edits)
	n.Editable = a.Editable
	n.Options = a.Options
	if prev != nil {
		n.ConfirmationTitle = cmp.Or(n.ConfirmationTitle, prev.ConfirmationTitle)
		n.RiskAssessment = cmp.Or(n.RiskAssessment, prev.RiskAssessment)
		n.Edits = cmp.Or(n.Edits, prev.Edits)
		n.Editable = cmp.Or(n.Editable, prev.Editable)
		if n.Options == nil {
			n.Options = prev.Options
		}
	}
	return n
}

// refineContributor returns the contributor a tool call has after a ready
// action that names next (nil: no change). A tool contributed by a client
// must stay with that same client, and a tool that was not contributed by
// a client cannot become one; a refinement that would break either rule is
// ignored. Others, such as naming the MCP server that owns a tool, apply.
func refineContributor(cur, next protocol.ToolCallContributor) protocol.ToolCallContributor {
	if next == nil {
		return cur
	}
	curClient, curIsClient := cur.(*protocol.ToolCallClientContributor)
	nextClient, nextIsClient := next.(*protocol.ToolCallClientContributor)
	switch {
	case curIsClient && nextIsClient && curClient.ClientID == nextClient.ClientID:
		return next
	case curIsClient || nextIsClient:
		return cur
	}
	return next
}

// toolCallConfirmed resolves a tool call waiting for confirmation: approved,
// it runs (with the edited input, if the client edited an inline one);
// denied, it is cancelled. The selected option, when it names one of the
// offered options, is recorded either way.
//
// An approval without a confirmation reason counts as a user action, and a
// denial without a reason as denied.
func toolCallConfirmed(tc protocol.ToolCallState, a *protocol.ChatToolCallConfirmedAction) protocol.ToolCallState {
	v, ok := tc.(*protocol.ToolCallPendingConfirmationState)
	if !ok {
		return nil
	}
	b, _ := toolCallBaseOf(tc)
	b.Meta = chatMetaOr(a.Meta, b.Meta)
	option := selectedOption(v.Options, a.SelectedOptionID)
	if a.Approved {
		n := b.running()
		n.InvocationMessage = v.InvocationMessage
		n.ToolInput = editedToolInput(v.ToolInput, a.EditedToolInput)
		n.Confirmed = protocol.ToolCallConfirmationReasonUserAction
		if a.Confirmed != nil {
			n.Confirmed = *a.Confirmed
		}
		n.SelectedOption = option
		return n
	}
	n := b.cancelled()
	n.InvocationMessage = v.InvocationMessage
	n.ToolInput = v.ToolInput
	n.Reason = protocol.ToolCallCancellationReasonDenied
	if a.Reason != nil {
		n.Reason = protocol.ToolCallCancellationReason(*a.Reason)
	}
	n.ReasonMessage = a.ReasonMessage
	n.UserSuggestion = a.UserSuggestion
	n.SelectedOption = option
	return n
}

// selectedOption returns a copy of the option whose id is id, or nil.
func selectedOption(options []protocol.ConfirmationOption, id *string) *protocol.ConfirmationOption {
	if id == nil {
		return nil
	}
	i := slices.IndexFunc(options, func(o protocol.ConfirmationOption) bool { return o.ID == *id })
	if i < 0 {
		return nil
	}
	return protocol.Ptr(options[i])
}

// editedToolInput returns the tool input after a confirmation that may
// carry edited input. Referenced input keeps its reference: the host
// replaces the referenced content before it accepts the confirmation
// (state-model.md, "Editable Parameters").
func editedToolInput(cur *protocol.ToolInput, edited *string) *protocol.ToolInput {
	if edited == nil || (cur != nil && cur.Ref != nil) {
		return cur
	}
	return protocol.Ptr(protocol.InlineToolInput(*edited))
}

// toolCallComplete records the result of a tool call that was running,
// waiting for confirmation (it then needed none) or waiting for
// authentication. It completes, or waits for the client to confirm the
// result when the action asks for that.
//
// From auth-required only a failed result applies: it is the client giving
// up on the authentication, and it completes at once, keeping the content
// produced before the pause unless the result has its own. A successful
// result there is ignored, since the tool never resumed (state-model.md,
// "Mid-execution MCP Authentication").
func toolCallComplete(tc protocol.ToolCallState, a *protocol.ChatToolCallCompleteAction) protocol.ToolCallState {
	confirmed := protocol.ToolCallConfirmationReasonNotNeeded
	var option *protocol.ConfirmationOption
	var content []protocol.ToolResultContent
	fromAuth := false
	switch v := tc.(type) {
	case *protocol.ToolCallPendingConfirmationState:
	case *protocol.ToolCallRunningState:
		confirmed, option = v.Confirmed, v.SelectedOption
	case *protocol.ToolCallAuthRequiredState:
		if a.Result.Success {
			return nil
		}
		confirmed, option, content, fromAuth = v.Confirmed, v.SelectedOption, v.Content, true
	default:
		return nil
	}
	b, _ := toolCallBaseOf(tc)
	b.Meta = chatMetaOr(a.Meta, b.Meta)
	invocation, input := toolCallParams(tc)
	res := a.Result
	if res.Content != nil {
		content = res.Content
	}
	if a.RequiresResultConfirmation != nil && *a.RequiresResultConfirmation && !fromAuth {
		n := b.pendingResultConfirmation()
		n.InvocationMessage, n.ToolInput = invocation, input
		n.Confirmed, n.SelectedOption = confirmed, option
		n.Success, n.PastTenseMessage = res.Success, res.PastTenseMessage
		n.Content, n.StructuredContent = content, res.StructuredContent
		n.Error = (*protocol.ToolCallPendingResultConfirmationStateError)(res.Error)
		return n
	}
	n := b.completed()
	n.InvocationMessage, n.ToolInput = invocation, input
	n.Confirmed, n.SelectedOption = confirmed, option
	n.Success, n.PastTenseMessage = res.Success, res.PastTenseMessage
	n.Content, n.StructuredContent = content, res.StructuredContent
	n.Error = (*protocol.ToolCallCompletedStateError)(res.Error)
	return n
}

// toolCallResultConfirmed resolves a result waiting for confirmation:
// approved, the tool call completes with it; denied, it is cancelled as
// result-denied.
func toolCallResultConfirmed(tc protocol.ToolCallState, a *protocol.ChatToolCallResultConfirmedAction) protocol.ToolCallState {
	v, ok := tc.(*protocol.ToolCallPendingResultConfirmationState)
	if !ok {
		return nil
	}
	b, _ := toolCallBaseOf(tc)
	b.Meta = chatMetaOr(a.Meta, b.Meta)
	if a.Approved {
		n := b.completed()
		n.InvocationMessage, n.ToolInput = v.InvocationMessage, v.ToolInput
		n.Confirmed, n.SelectedOption = v.Confirmed, v.SelectedOption
		n.Success, n.PastTenseMessage = v.Success, v.PastTenseMessage
		n.Content, n.StructuredContent = v.Content, v.StructuredContent
		n.Error = (*protocol.ToolCallCompletedStateError)(v.Error)
		return n
	}
	n := b.cancelled()
	n.InvocationMessage, n.ToolInput = v.InvocationMessage, v.ToolInput
	n.Reason = protocol.ToolCallCancellationReasonResultDenied
	n.SelectedOption = v.SelectedOption
	return n
}

// toolCallContentChanged replaces the intermediate content of a running
// tool call.
func toolCallContentChanged(tc protocol.ToolCallState, a *protocol.ChatToolCallContentChangedAction) protocol.ToolCallState {
	v, ok := tc.(*protocol.ToolCallRunningState)
	if !ok {
		return nil
	}
	n := *v
	n.Meta = chatMetaOr(a.Meta, v.Meta)
	n.Content = a.Content
	return &n
}

// toolCallAuthRequired pauses a running tool call until the user
// authenticates. Only tools contributed by an MCP server can pause so.
func toolCallAuthRequired(tc protocol.ToolCallState, a *protocol.ChatToolCallAuthRequiredAction) protocol.ToolCallState {
	v, ok := tc.(*protocol.ToolCallRunningState)
	if !ok {
		return nil
	}
	mcp, ok := v.Contributor.(*protocol.ToolCallMCPContributor)
	if !ok || mcp == nil {
		return nil
	}
	b, _ := toolCallBaseOf(tc)
	b.Meta = chatMetaOr(a.Meta, b.Meta)
	return &protocol.ToolCallAuthRequiredState{
		ToolCallID:        b.ToolCallID,
		ToolName:          b.ToolName,
		DisplayName:       b.DisplayName,
		Intention:         b.Intention,
		Contributor:       *mcp,
		Meta:              b.Meta,
		InvocationMessage: v.InvocationMessage,
		ToolInput:         v.ToolInput,
		Confirmed:         v.Confirmed,
		SelectedOption:    v.SelectedOption,
		Content:           v.Content,
		Auth:              a.Auth,
	}
}

// toolCallAuthResolved resumes a tool call paused for authentication, as it
// was before the pause.
func toolCallAuthResolved(tc protocol.ToolCallState, a *protocol.ChatToolCallAuthResolvedAction) protocol.ToolCallState {
	v, ok := tc.(*protocol.ToolCallAuthRequiredState)
	if !ok {
		return nil
	}
	b, _ := toolCallBaseOf(tc)
	b.Meta = chatMetaOr(a.Meta, b.Meta)
	n := b.running()
	n.InvocationMessage, n.ToolInput = v.InvocationMessage, v.ToolInput
	n.Confirmed, n.SelectedOption = v.Confirmed, v.SelectedOption
	n.Content = v.Content
	return n
}

// toolCallSkipped returns the cancelled (skipped) form of a tool call left
// unfinished when its turn ends, or nil for one that completed or was
// cancelled already (or whose status is unknown).
func toolCallSkipped(tc protocol.ToolCallState) protocol.ToolCallState {
	switch tc.(type) {
	case *protocol.ToolCallCompletedState, *protocol.ToolCallCancelledState:
		return nil
	}
	b, ok := toolCallBaseOf(tc)
	if !ok {
		return nil
	}
	n := b.cancelled()
	n.InvocationMessage, n.ToolInput = toolCallParams(tc)
	n.Reason = protocol.ToolCallCancellationReasonSkipped
	return n
}

// Shared fields

// chatToolBase holds the fields every tool call state has. Its methods
// start a tool call in each status from them.
type chatToolBase protocol.ToolCallBase

// toolCallBaseOf returns the shared fields of tc, and false when its
// status is unknown.
func toolCallBaseOf(tc protocol.ToolCallState) (chatToolBase, bool) {
	switch v := tc.(type) {
	case *protocol.ToolCallStreamingState:
		return chatToolBase{v.ToolCallID, v.ToolName, v.DisplayName, v.Intention, v.Contributor, v.Meta}, true
	case *protocol.ToolCallPendingConfirmationState:
		return chatToolBase{v.ToolCallID, v.ToolName, v.DisplayName, v.Intention, v.Contributor, v.Meta}, true
	case *protocol.ToolCallRunningState:
		return chatToolBase{v.ToolCallID, v.ToolName, v.DisplayName, v.Intention, v.Contributor, v.Meta}, true
	case *protocol.ToolCallAuthRequiredState:
		mcp := v.Contributor
		return chatToolBase{v.ToolCallID, v.ToolName, v.DisplayName, v.Intention, &mcp, v.Meta}, true
	case *protocol.ToolCallPendingResultConfirmationState:
		return chatToolBase{v.ToolCallID, v.ToolName, v.DisplayName, v.Intention, v.Contributor, v.Meta}, true
	case *protocol.ToolCallCompletedState:
		return chatToolBase{v.ToolCallID, v.ToolName, v.DisplayName, v.Intention, v.Contributor, v.Meta}, true
	case *protocol.ToolCallCancelledState:
		return chatToolBase{v.ToolCallID, v.ToolName, v.DisplayName, v.Intention, v.Contributor, v.Meta}, true
	}
	return chatToolBase{}, false
}

// toolCallParams returns the invocation message and tool input of tc. A
// streaming tool call has no tool input yet, and its invocation message
// may be missing (returned empty).
func toolCallParams(tc protocol.ToolCallState) (protocol.StringOrMarkdown, *protocol.ToolInput) {
	switch v := tc.(type) {
	case *protocol.ToolCallStreamingState:
		if v.InvocationMessage == nil {
			return protocol.StringOrMarkdown{}, nil
		}
		return *v.InvocationMessage, nil
	case *protocol.ToolCallPendingConfirmationState:
		return v.InvocationMessage, v.ToolInput
	case *protocol.ToolCallRunningState:
		return v.InvocationMessage, v.ToolInput
	case *protocol.ToolCallAuthRequiredState:
		return v.InvocationMessage, v.ToolInput
	case *protocol.ToolCallPendingResultConfirmationState:
		return v.InvocationMessage, v.ToolInput
	case *protocol.ToolCallCompletedState:
		return v.InvocationMessage, v.ToolInput
	case *protocol.ToolCallCancelledState:
		return v.InvocationMessage, v.ToolInput
	}
	return protocol.StringOrMarkdown{}, nil
}

func (b chatToolBase) pendingConfirmation() *protocol.ToolCallPendingConfirmationState {
	return &protocol.ToolCallPendingConfirmationState{ToolCallID: b.ToolCallID, ToolName: b.ToolName, DisplayName: b.DisplayName, Intention: b.Intention, Contributor: b.Contributor, Meta: b.Meta}
}

func (b chatToolBase) running() *protocol.ToolCallRunningState {
	return &protocol.ToolCallRunningState{ToolCallID: b.ToolCallID, ToolName: b.ToolName, DisplayName: b.DisplayName, Intention: b.Intention, Contributor: b.Contributor, Meta: b.Meta}
}

func (b chatToolBase) pendingResultConfirmation() *protocol.ToolCallPendingResultConfirmationState {
	return &protocol.ToolCallPendingResultConfirmationState{ToolCallID: b.ToolCallID, ToolName: b.ToolName, DisplayName: b.DisplayName, Intention: b.Intention, Contributor: b.Contributor, Meta: b.Meta}
}

func (b chatToolBase) completed() *protocol.ToolCallCompletedState {
	return &protocol.ToolCallCompletedState{ToolCallID: b.ToolCallID, ToolName: b.ToolName, DisplayName: b.DisplayName, Intention: b.Intention, Contributor: b.Contributor, Meta: b.Meta}
}

func (b chatToolBase) cancelled() *protocol.ToolCallCancelledState {
	return &protocol.ToolCallCancelledState{ToolCallID: b.ToolCallID, ToolName: b.ToolName, DisplayName: b.DisplayName, Intention: b.Intention, Contributor: b.Contributor, Meta: b.Meta}
}

// chatMetaOr returns the _meta an action brings, or cur when it brings none.
func chatMetaOr(next, cur map[string]jsontext.Value) map[string]jsontext.Value {
	if next != nil {
		return next
	}
	return cur
}
