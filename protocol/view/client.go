package view

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// This file holds what a client does with the versions before 0.9.0: the
// params of the requests it sends, taken down to the version's shapes, and
// the notifications and results it receives, brought up to 1.x. The
// actions, snapshots and errors go through the functions of down.go and
// up.go.

// Params returns the params of a request a client sends, as the version
// takes them: params itself when nothing changes, else a converted copy.
// Members the version does not know are left out (expiresIn of
// authenticate, flowControl of subscribe, windows of reconnect); 0.5.x
// and 0.6.x name the first working directory only.
func (v *View) Params(params any) any {
	if !v.legacy {
		return params
	}
	switch p := params.(type) {
	case *protocol.CreateSessionParams:
		out := *p
		if v.shape >= Shape06 && p.WorkingDirectories != nil {
			out.WorkingDirectory, out.WorkingDirectories = first(p.WorkingDirectories), nil
		}
		if p.ActiveClient != nil && len(p.ActiveClient.Customizations) > 0 {
			ac := *p.ActiveClient
			ac.Customizations = downClientPlugins(p.ActiveClient.Customizations)
			out.ActiveClient = &ac
		}
		return &out
	case *protocol.CreateChatParams:
		if v.shape < Shape06 || p.WorkingDirectories == nil {
			return p
		}
		out := *p
		out.WorkingDirectory, out.WorkingDirectories = first(p.WorkingDirectories), nil
		return &out
	case *protocol.AuthenticateParams:
		if p.ExpiresIn == nil {
			return p
		}
		out := *p
		out.ExpiresIn = nil
		return &out
	case *protocol.SubscribeParams:
		if p.FlowControl == nil {
			return p
		}
		out := *p
		out.FlowControl = nil
		return &out
	case *protocol.ReconnectParams:
		if p.Windows == nil {
			return p
		}
		out := *p
		out.Windows = nil
		return &out
	}
	return params
}

// UpNotificationJSON returns the encoded params of a notification the
// version sent, in a form the 1.x types decode: raw itself unless the
// shape changed in a way they cannot hold (auth/required names its
// resource by URI before 0.9.0, by metadata since).
func (v *View) UpNotificationJSON(method string, raw jsontext.Value) (jsontext.Value, error) {
	if !v.legacy || method != "auth/required" {
		return raw, nil
	}
	var wire struct {
		Channel  string                       `json:"channel"`
		Resource jsontext.Value               `json:"resource"`
		Reason   *protocol.AuthRequiredReason `json:"reason,omitempty"`
	}
	if err := protocol.Unmarshal(raw, &wire); err != nil {
		return nil, err
	}
	if k := wire.Resource.Kind(); k != '"' {
		return raw, nil // already metadata
	}
	var uri string
	if err := protocol.Unmarshal(wire.Resource, &uri); err != nil {
		return nil, err
	}
	return protocol.Marshal(&protocol.AuthRequiredParams{Channel: wire.Channel, Resource: protocol.ProtectedResourceMetadata{Resource: uri}, Reason: wire.Reason})
}

// UpNotification returns the decoded params of a notification the version
// sent in their 1.x shape.
func (v *View) UpNotification(params any) any {
	if !v.legacy {
		return params
	}
	switch p := params.(type) {
	case *protocol.SessionAddedParams:
		out := *p
		out.Summary = v.UpSummary(p.Summary)
		return &out
	case *protocol.SessionSummaryChangedParams:
		if p.Changes.WorkingDirectory == nil {
			return p
		}
		out := *p
		if out.Changes.WorkingDirectories == nil {
			out.Changes.WorkingDirectories = []protocol.URI{*p.Changes.WorkingDirectory}
		}
		out.Changes.WorkingDirectory = nil
		return &out
	}
	return params
}

// UpSummary returns a session summary the version sent in its 1.x shape:
// an older version's one workingDirectory becomes the list.
func (v *View) UpSummary(s protocol.SessionSummary) protocol.SessionSummary {
	if !v.legacy || s.WorkingDirectory == nil {
		return s
	}
	if s.WorkingDirectories == nil {
		s.WorkingDirectories = []protocol.URI{*s.WorkingDirectory}
	}
	s.WorkingDirectory = nil
	return s
}

// UpSummaries returns session summaries the version sent in their 1.x
// shape, sharing the slice when none changes.
func (v *View) UpSummaries(list []protocol.SessionSummary) []protocol.SessionSummary {
	if !v.legacy {
		return list
	}
	return convertEach(list, func(s protocol.SessionSummary) (protocol.SessionSummary, bool) {
		return v.UpSummary(s), s.WorkingDirectory != nil
	})
}
