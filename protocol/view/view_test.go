package view_test

import (
	"encoding/json"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
)

// The versions of each group: the older ones see the shapes of the 0.8.0
// pack, the 1.x era sees the values unchanged.
var (
	olderVersions = []string{"0.5.1", "0.5.2", "0.6.0", "0.7.0", "0.8.0", "0.8.3"}
	newerVersions = []string{"0.9.0", "0.10.0", "1.0.0", "1.1.0", "1.4.0"}
)

const (
	chatURI    = "ahp-chat:/c"
	annotURI   = "ahp-session:/s/annotations"
	sessionURI = "ahp-session:/s"
)

// shapeCase is one changed shape: a 1.x value and how versions before 0.9.0
// see it. up, when set, is what coming back up gives (when the older shape
// loses something); otherwise the value itself.
type shapeCase struct {
	name    string
	kind    string // "action", a state type name, or a notification method
	channel string
	current string // 1.x JSON
	older   string // the 0.8.0 shape
	up      string
}

var shapes = []shapeCase{{
	// ChangesetStatus recomputing is 1.x; the 0.8.0 enum has computing,
	// ready and error (SCHEMA-DIFF: ChangesetStatus).
	name: "changeset/statusChanged recomputing", kind: "action", channel: "ahp-session:/s/changeset/uncommitted/k",
	current: `{"type":"changeset/statusChanged","status":"recomputing"}`,
	older:   `{"type":"changeset/statusChanged","status":"computing"}`,
	up:      `{"type":"changeset/statusChanged","status":"computing"}`,
}, {
	name: "ChangesetState recomputing", kind: "ChangesetState", channel: "ahp-session:/s/changeset/uncommitted/k",
	current: `{"status":"recomputing","files":[{"id":"file:///r/a","edit":{"after":{"uri":"file:///r/a","content":{"uri":"file:///r/a"}},"diff":{"added":1,"removed":0}}}]}`,
	older:   `{"status":"computing","files":[{"id":"file:///r/a","edit":{"after":{"uri":"file:///r/a","content":{"uri":"file:///r/a"}},"diff":{"added":1,"removed":0}}}]}`,
	up:      `{"status":"computing","files":[{"id":"file:///r/a","edit":{"after":{"uri":"file:///r/a","content":{"uri":"file:///r/a"}},"diff":{"added":1,"removed":0}}}]}`,
}, {
	// ChatErrorAction.part (1.x) versus error (0.8.0).
	name: "chat/error", kind: "action", channel: chatURI,
	current: `{"type":"chat/error","turnId":"t","duration":5,"part":{"kind":"error","error":{"errorType":"x","message":"boom"}}}`,
	older:   `{"type":"chat/error","turnId":"t","duration":5,"error":{"errorType":"x","message":"boom"}}`,
}, {
	// Turn.error: the last error part of a failed turn.
	name: "Turn.error", kind: "ChatState", channel: chatURI,
	current: `{"resource":"ahp-chat:/c","title":"T","status":2,"modifiedAt":"m","turns":[{"id":"t","message":{"text":"hi","origin":{"kind":"user"}},` +
		`"responseParts":[{"kind":"markdown","id":"p","content":"so far"},{"kind":"error","error":{"errorType":"x","message":"boom"}}],"state":"error"}]}`,
	older: `{"resource":"ahp-chat:/c","title":"T","status":2,"modifiedAt":"m","turns":[{"id":"t","message":{"text":"hi","origin":{"kind":"user"}},` +
		`"responseParts":[{"kind":"markdown","id":"p","content":"so far"}],"state":"error","error":{"errorType":"x","message":"boom"}}]}`,
}, {
	name: "chat/turnsLoaded turns", kind: "action", channel: chatURI,
	current: `{"type":"chat/turnsLoaded","turns":[{"id":"t","message":{"text":"hi","origin":{"kind":"user"}},"responseParts":[{"kind":"error","error":{"errorType":"x","message":"boom"}}],"state":"error"}]}`,
	older:   `{"type":"chat/turnsLoaded","turns":[{"id":"t","message":{"text":"hi","origin":{"kind":"user"}},"responseParts":[],"state":"error","error":{"errorType":"x","message":"boom"}}]}`,
}, {
	// MessageKind automation does not exist before 0.9.0.
	name: "automation message", kind: "action", channel: chatURI,
	current: `{"type":"chat/turnStarted","turnId":"t","startedAt":"s","message":{"text":"run","origin":{"kind":"automation"}}}`,
	older:   `{"type":"chat/turnStarted","turnId":"t","startedAt":"s","message":{"text":"run","origin":{"kind":"user"}}}`,
	up:      `{"type":"chat/turnStarted","turnId":"t","startedAt":"s","message":{"text":"run","origin":{"kind":"user"}}}`,
}, {
	// SessionLifecycle failed versus creationFailed; session origin and
	// chat movable are 1.x members.
	name: "session lifecycle", kind: "SessionState", channel: sessionURI,
	current: `{"provider":"p","title":"S","status":2,"origin":{"kind":"automation","automation":"ahp-automation:/a","run":"ahp-automation-run:/r"},"lifecycle":"failed",` +
		`"activeClients":[],"chats":[{"resource":"ahp-chat:/c","title":"C","status":1,"modifiedAt":"m","movable":true}]}`,
	older: `{"provider":"p","title":"S","status":2,"lifecycle":"creationFailed","activeClients":[],"chats":[{"resource":"ahp-chat:/c","title":"C","status":1,"modifiedAt":"m"}]}`,
	up:    `{"provider":"p","title":"S","status":2,"lifecycle":"failed","activeClients":[],"chats":[{"resource":"ahp-chat:/c","title":"C","status":1,"modifiedAt":"m"}]}`,
}, {
	// Terminal lifecycle versus exitCode, and the claim's chat.
	name: "terminal exited", kind: "TerminalState",
	current: `{"title":"sh","content":[],"lifecycle":{"status":"exited","exitCode":3},"claim":{"kind":"session","session":"ahp-session:/s","chat":"ahp-chat:/c"}}`,
	older:   `{"title":"sh","content":[],"exitCode":3,"claim":{"kind":"session","session":"ahp-session:/s"}}`,
	up:      `{"title":"sh","content":[],"lifecycle":{"status":"exited","exitCode":3},"claim":{"kind":"session","session":"ahp-session:/s"}}`,
}, {
	name: "terminal running", kind: "TerminalState",
	current: `{"title":"sh","content":[],"lifecycle":{"status":"running"},"claim":{"kind":"client","clientId":"c"}}`,
	older:   `{"title":"sh","content":[],"claim":{"kind":"client","clientId":"c"}}`,
}, {
	name: "terminal claimed", kind: "action",
	current: `{"type":"terminal/claimed","claim":{"kind":"session","session":"ahp-session:/s","chat":"ahp-chat:/c","turnId":"t"}}`,
	older:   `{"type":"terminal/claimed","claim":{"kind":"session","session":"ahp-session:/s","turnId":"t"}}`,
	up:      `{"type":"terminal/claimed","claim":{"kind":"session","session":"ahp-session:/s","turnId":"t"}}`,
}, {
	name: "root terminals", kind: "action",
	current: `{"type":"root/terminalsChanged","terminals":[{"resource":"ahp-terminal:/t","title":"sh","claim":{"kind":"client","clientId":"c"},"lifecycle":{"status":"exited","exitCode":0}}]}`,
	older:   `{"type":"root/terminalsChanged","terminals":[{"resource":"ahp-terminal:/t","title":"sh","claim":{"kind":"client","clientId":"c"},"exitCode":0}]}`,
}, {
	// Customizations: enablement decisions versus enabled.
	name: "customization toggle", kind: "action", channel: sessionURI,
	current: `{"type":"session/customizationToggled","id":"p","enablement":[{"kind":"session","enabled":false}]}`,
	older:   `{"type":"session/customizationToggled","id":"p","enabled":false}`,
}, {
	name: "customizations", kind: "SessionState", channel: sessionURI,
	current: `{"provider":"p","title":"S","status":1,"lifecycle":"ready","activeClients":[{"clientId":"c","tools":[],"customizations":[{"type":"plugin","id":"cp","uri":"u","name":"n","enablement":[{"kind":"global","enabled":true}]}]}],"chats":[],` +
		`"customizations":[{"type":"plugin","id":"p","uri":"u","name":"P","enablement":[{"kind":"session","enabled":false}]},{"type":"mcpServer","id":"m","uri":"u","name":"M","state":{"kind":"ready"}}]}`,
	older: `{"provider":"p","title":"S","status":1,"lifecycle":"ready","activeClients":[{"clientId":"c","tools":[],"customizations":[{"type":"plugin","id":"cp","uri":"u","name":"n","enabled":true}]}],"chats":[],` +
		`"customizations":[{"type":"plugin","id":"p","uri":"u","name":"P","enabled":false},{"type":"mcpServer","id":"m","uri":"u","name":"M","enabled":true,"state":{"kind":"ready"}}]}`,
}, {
	// Annotation.origin versus turnId.
	name: "annotations", kind: "AnnotationsState", channel: annotURI,
	current: `{"annotations":[{"id":"a","origin":{"session":"ahp-session:/s","turnId":"t"},"resource":"file:///f","resolved":false,"entries":[]}]}`,
	older:   `{"annotations":[{"id":"a","turnId":"t","resource":"file:///f","resolved":false,"entries":[]}]}`,
}, {
	name: "annotation updated", kind: "action", channel: annotURI,
	current: `{"type":"annotations/updated","annotationId":"a","origin":{"session":"ahp-session:/s","turnId":"t2"}}`,
	older:   `{"type":"annotations/updated","annotationId":"a","turnId":"t2"}`,
}, {
	// SessionSummary.chats, defaultChat and origin are 1.x members.
	name: "session added", kind: "root/sessionAdded",
	current: `{"channel":"ahp-root://","summary":{"provider":"p","title":"S","status":1,"resource":"ahp-session:/s","createdAt":"c","modifiedAt":"m",` +
		`"chats":[{"resource":"ahp-chat:/c","title":"C"}],"defaultChat":"ahp-chat:/c"}}`,
	older: `{"channel":"ahp-root://","summary":{"provider":"p","title":"S","status":1,"resource":"ahp-session:/s","createdAt":"c","modifiedAt":"m"}}`,
}, {
	// AuthRequiredParams.resource: metadata versus its identifier.
	name: "auth required", kind: "auth/required",
	current: `{"channel":"ahp-session:/s","resource":{"resource":"https://api.example","scopes_supported":["read"]},"reason":"required"}`,
	older:   `{"channel":"ahp-session:/s","resource":"https://api.example","reason":"required"}`,
}}

func decodeKind(t *testing.T, kind, data string) any {
	t.Helper()
	switch kind {
	case "action":
		a, err := protocol.UnmarshalStateAction([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		return a
	case "root/sessionAdded":
		var p protocol.SessionAddedParams
		if err := protocol.Unmarshal([]byte(data), &p); err != nil {
			t.Fatal(err)
		}
		return &p
	case "auth/required":
		var p protocol.AuthRequiredParams
		if err := protocol.Unmarshal([]byte(data), &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	v, err := protocol.Decode(kind, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func down(v *view.View, kind string, x any) any {
	switch kind {
	case "action":
		return v.Action(x.(protocol.StateAction))
	case "root/sessionAdded", "auth/required":
		return v.Notification(kind, x)
	}
	return v.State(x.(protocol.SnapshotState))
}

func up(v *view.View, kind, channel string, x any) any {
	if kind == "action" {
		return v.UpAction(channel, x.(protocol.StateAction))
	}
	return v.UpState(channel, x.(protocol.SnapshotState))
}

func sameJSON(t *testing.T, what, want string, got any) {
	t.Helper()
	b, err := protocol.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// TestShapes checks every changed shape for every version: the older
// versions see the 0.8.0 shape and bring it back up, the newer see the 1.x
// value itself.
func TestShapes(t *testing.T) {
	for _, sc := range shapes {
		t.Run(sc.name, func(t *testing.T) {
			for _, version := range olderVersions {
				v := view.For(version)
				x := decodeKind(t, sc.kind, sc.current)
				before, _ := protocol.Marshal(x)
				sameJSON(t, version+" down", sc.older, down(v, sc.kind, x))
				if after, _ := protocol.Marshal(x); string(after) != string(before) {
					t.Errorf("%s: the conversion modified its input", version)
				}
				if sc.kind == "root/sessionAdded" || sc.kind == "auth/required" {
					continue // the host sends these; nothing comes back up
				}
				want := sc.up
				if want == "" {
					want = sc.current
				}
				sameJSON(t, version+" up", want, up(v, sc.kind, sc.channel, decodeKind(t, sc.kind, sc.older)))
				// Coming up leaves 1.x shapes as they are.
				sameJSON(t, version+" up of 1.x", sc.current, up(v, sc.kind, sc.channel, decodeKind(t, sc.kind, sc.current)))
			}
			for _, version := range newerVersions {
				v := view.For(version)
				x := decodeKind(t, sc.kind, sc.current)
				if got := down(v, sc.kind, x); got != x {
					t.Errorf("%s changed the value: %v", version, got)
				}
			}
		})
	}
}

func TestErrorCodes(t *testing.T) {
	older, newer := view.For("0.8.0"), view.For("1.0.0")
	conflict := &protocol.Error{Code: protocol.CodeConflict, Message: "etag"}
	if got := older.Error(conflict); got.Code != protocol.CodeInvalidParams || got.Message != "etag" || conflict.Code != protocol.CodeConflict {
		t.Errorf("0.8.0 sees %+v", got)
	}
	if got := newer.Error(conflict); got != conflict {
		t.Errorf("1.0.0 sees %+v", got)
	}
	gone := &protocol.Error{Code: protocol.CodeContentNotFound}
	if got := older.UpError(gone); got.Code != protocol.CodeNotFound {
		t.Errorf("-32006 from 0.8.0 comes up as %d", got.Code)
	}
	if got := newer.UpError(gone); got != gone {
		t.Errorf("1.0.0 changed %+v", got)
	}
}

func TestInitializeResult(t *testing.T) {
	r := &protocol.InitializeResult{ProtocolVersion: "0.8.0", Meta: map[string]jsontext.Value{"x": jsontext.Value(`1`)}}
	if got := view.For("0.8.0").InitializeResult(r); got.Meta != nil || r.Meta == nil {
		t.Errorf("0.8.0 gets _meta %v", got.Meta)
	}
	if got := view.For("1.0.0").InitializeResult(r); got != r {
		t.Error("1.0.0 got a changed result")
	}
}

// TestUpMissing checks that members 1.x requires and the older shape has
// no place for are missing only when coming up did not supply them.
func TestUpMissing(t *testing.T) {
	older := view.For("0.8.0")
	decode := func(data string) (protocol.StateAction, error) {
		var p protocol.DispatchActionParams
		err := protocol.UnmarshalStrict([]byte(data), &p)
		return older.UpAction(chatURI, p.Action), err
	}
	up, err := decode(`{"channel":"ahp-chat:/c","clientSeq":1,"action":{"type":"session/customizationToggled","id":"p","enabled":true}}`)
	m, _ := err.(*protocol.MissingError)
	if m == nil || !m.Has("action.enablement") || older.UpMissing(m, up) != nil {
		t.Errorf("toggle: missing %v, after coming up %v", err, older.UpMissing(m, up))
	}
	up, err = decode(`{"channel":"ahp-chat:/c","clientSeq":1,"action":{"type":"session/customizationToggled","id":"p"}}`)
	m, _ = err.(*protocol.MissingError)
	if rest := older.UpMissing(m, up); rest == nil {
		t.Error("a toggle with neither enabled nor enablement is complete")
	}
	if rest := view.For("1.0.0").UpMissing(m, up); rest == nil {
		t.Error("1.0.0 drops missing members")
	}
}

// TestBeforeMultiroot: 0.5.x and 0.6.x name one workingDirectory, the
// first of the list (multiroot sessions came in 0.7.0); 0.5.x keeps open
// input requests in ChatState.inputRequests (0.6.0 moved them into the
// turn's parts).
func TestBeforeMultiroot(t *testing.T) {
	session := `{"provider":"p","title":"S","status":1,"lifecycle":"ready","workingDirectories":["file:///a","file:///b"],"activeClients":[],` +
		`"chats":[{"resource":"ahp-chat:/c","title":"C","status":1,"modifiedAt":"m","workingDirectories":["file:///b"]}]}`
	single := `{"provider":"p","title":"S","status":1,"lifecycle":"ready","workingDirectory":"file:///a","activeClients":[],` +
		`"chats":[{"resource":"ahp-chat:/c","title":"C","status":1,"modifiedAt":"m","workingDirectory":"file:///b"}]}`
	for _, version := range []string{"0.5.1", "0.6.0"} {
		v := view.For(version)
		sameJSON(t, version+" session", single, v.State(stateOf(t, "SessionState", session)))
		sameJSON(t, version+" session up", `{"provider":"p","title":"S","status":1,"lifecycle":"ready","workingDirectories":["file:///a"],"activeClients":[],`+
			`"chats":[{"resource":"ahp-chat:/c","title":"C","status":1,"modifiedAt":"m","workingDirectories":["file:///b"]}]}`,
			v.UpState(sessionURI, stateOf(t, "SessionState", single)))
		sum := protocol.SessionSummary{Resource: sessionURI, WorkingDirectories: []protocol.URI{"file:///a"}}
		if got := v.Summary(sum); got.WorkingDirectory == nil || *got.WorkingDirectory != "file:///a" || got.WorkingDirectories != nil {
			t.Errorf("%s summary %+v", version, got)
		}
		p := v.UpCreateSession(&protocol.CreateSessionParams{Channel: sessionURI, WorkingDirectory: protocol.Ptr("file:///w")})
		if len(p.WorkingDirectories) != 1 || p.WorkingDirectories[0] != "file:///w" || p.WorkingDirectory != nil {
			t.Errorf("%s createSession %+v", version, p)
		}
	}
	if v := view.For("0.7.0"); encodeJSON(t, v.State(stateOf(t, "SessionState", session))) != encodeJSON(t, stateOf(t, "SessionState", session)) {
		t.Error("0.7.0 sees a converted session")
	}
	chat := `{"resource":"ahp-chat:/c","title":"T","status":24,"modifiedAt":"m","turns":[],"activeTurn":{"id":"t","startedAt":"s","message":{"text":"hi","origin":{"kind":"user"}},` +
		`"responseParts":[{"kind":"inputRequest","request":{"id":"done"},"response":"accept"},{"kind":"inputRequest","request":{"id":"open","message":"Which?"}}]}}`
	old := `{"resource":"ahp-chat:/c","title":"T","status":24,"modifiedAt":"m","turns":[],"activeTurn":{"id":"t","startedAt":"s","message":{"text":"hi","origin":{"kind":"user"}},` +
		`"responseParts":[{"kind":"inputRequest","request":{"id":"done"},"response":"accept"}]},"inputRequests":[{"id":"open","message":"Which?"}]}`
	v := view.For("0.5.2")
	sameJSON(t, "0.5.2 chat", old, v.State(stateOf(t, "ChatState", chat)))
	sameJSON(t, "0.5.2 chat up", chat, v.UpState(chatURI, stateOf(t, "ChatState", old)))
	sameJSON(t, "0.6.0 chat", chat, view.For("0.6.0").State(stateOf(t, "ChatState", chat)))
}

func encodeJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := protocol.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func stateOf(t *testing.T, typ, data string) protocol.SnapshotState {
	t.Helper()
	return decodeKind(t, typ, data).(protocol.SnapshotState)
}

// TestInputRequestRecords: how a turn records its input requests differs
// between the two 0.5 versions (CHANGELOG 0.5.2, "InputRequestResponsePart"):
// 0.5.2 appends a resolved request to the turn as an inputRequest part and
// records nothing for a request the turn ended without answering; 0.5.1,
// before that part existed, records no request at all. From 0.6.0 the
// parts hold open and resolved requests alike, and an unanswered one stays
// in the completed turn.
func TestInputRequestRecords(t *testing.T) {
	done := `{"kind":"inputRequest","request":{"id":"done"},"response":"accept"}`
	open := `{"kind":"inputRequest","request":{"id":"open","message":"Which?"}}`
	abandoned := `{"kind":"inputRequest","request":{"id":"gone"}}`
	md := `{"kind":"markdown","id":"p","content":"so far"}`
	msg := `"message":{"text":"hi","origin":{"kind":"user"}}`
	chat := func(turnParts, activeParts, extra string) string {
		return `{"resource":"ahp-chat:/c","title":"T","status":24,"modifiedAt":"m","turns":[{"id":"t0",` + msg + `,"responseParts":[` + turnParts + `],"state":"complete"}],` +
			`"activeTurn":{"id":"t","startedAt":"s",` + msg + `,"responseParts":[` + activeParts + `]}` + extra + `}`
	}
	current := chat(done+","+abandoned, md+","+done+","+open, "")
	loaded := `{"type":"chat/turnsLoaded","turns":[{"id":"t0",` + msg + `,"responseParts":[` + done + `,` + abandoned + `],"state":"complete"}]}`
	tests := []struct {
		version      string
		chat, loaded string
	}{{
		version: "0.5.2",
		chat:    chat(done, md+","+done, `,"inputRequests":[{"id":"open","message":"Which?"}]`),
		loaded:  `{"type":"chat/turnsLoaded","turns":[{"id":"t0",` + msg + `,"responseParts":[` + done + `],"state":"complete"}]}`,
	}, {
		version: "0.5.1",
		chat:    chat("", md, `,"inputRequests":[{"id":"open","message":"Which?"}]`),
		loaded:  `{"type":"chat/turnsLoaded","turns":[{"id":"t0",` + msg + `,"responseParts":[],"state":"complete"}]}`,
	}, {
		version: "0.6.0",
		chat:    current,
		loaded:  loaded,
	}}
	for _, tc := range tests {
		v := view.For(tc.version)
		sameJSON(t, tc.version+" chat", tc.chat, v.State(stateOf(t, "ChatState", current)))
		a := decodeKind(t, "action", loaded).(protocol.StateAction)
		sameJSON(t, tc.version+" turnsLoaded", tc.loaded, v.Action(a))
		turns := a.(*protocol.ChatTurnsLoadedAction).Turns
		if got, want := encodeJSON(t, v.Turns(turns)), encodeJSON(t, decodeKind(t, "action", tc.loaded).(*protocol.ChatTurnsLoadedAction).Turns); got != want {
			t.Errorf("%s fetchTurns turns:\n got %s\nwant %s", tc.version, got, want)
		}
		// What the version sends comes up with its open requests back in
		// the active turn's parts.
		up := v.UpState(chatURI, stateOf(t, "ChatState", tc.chat)).(*protocol.ChatState)
		if n := len(up.ActiveTurn.ResponseParts); up.InputRequests != nil || up.ActiveTurn.ResponseParts[n-1].(*protocol.InputRequestResponsePart).Request.ID != "open" {
			t.Errorf("%s up: %s", tc.version, encodeJSON(t, up))
		}
	}
	if view.For("0.5.1").Shape() == view.For("0.5.2").Shape() {
		t.Error("0.5.1 and 0.5.2 share a shape")
	}
}

// Review (changeset/filesReviewChanged, 0.6.0) is unknown to 0.5.x: its
// views show changesets without the review capability and reviewed flags;
// 0.6.0 and later keep them.
func TestChangesetReviewBefore06(t *testing.T) {
	const (
		catalogue = `{"type":"session/changesetsChanged","changesets":[{"label":"U","uriTemplate":"ahp-session:/s/changeset/u","changeKind":"uncommitted","capabilities":{"review":{}}}]}`
		fileSet   = `{"type":"changeset/fileSet","file":{"id":"file:///r/a","edit":{},"reviewed":true}}`
		content   = `{"type":"changeset/contentChanged","files":[{"id":"file:///r/a","edit":{},"reviewed":false},{"id":"file:///r/b","edit":{}}]}`
		state     = `{"status":"ready","files":[{"id":"file:///r/a","edit":{},"reviewed":true}]}`
	)
	for _, version := range []string{"0.5.1", "0.5.2"} {
		v := view.For(version)
		sameJSON(t, version+" catalogue", `{"type":"session/changesetsChanged","changesets":[{"label":"U","uriTemplate":"ahp-session:/s/changeset/u","changeKind":"uncommitted","capabilities":{}}]}`,
			down(v, "action", decodeKind(t, "action", catalogue)))
		sameJSON(t, version+" fileSet", `{"type":"changeset/fileSet","file":{"id":"file:///r/a","edit":{}}}`, down(v, "action", decodeKind(t, "action", fileSet)))
		sameJSON(t, version+" contentChanged", `{"type":"changeset/contentChanged","files":[{"id":"file:///r/a","edit":{}},{"id":"file:///r/b","edit":{}}]}`, down(v, "action", decodeKind(t, "action", content)))
		sameJSON(t, version+" state", `{"status":"ready","files":[{"id":"file:///r/a","edit":{}}]}`, down(v, "ChangesetState", decodeKind(t, "ChangesetState", state)))
	}
	for _, version := range []string{"0.6.0", "0.8.0", "1.1.0"} {
		v := view.For(version)
		for _, a := range []string{catalogue, fileSet, content} {
			sameJSON(t, version, a, down(v, "action", decodeKind(t, "action", a)))
		}
		sameJSON(t, version+" state", state, down(v, "ChangesetState", decodeKind(t, "ChangesetState", state)))
	}
}

// TestClientConversions: what a 1.x client sends an older host goes down,
// and what the host sends comes up (the client half of the views).
func TestClientConversions(t *testing.T) {
	p := &protocol.CreateSessionParams{Channel: sessionURI, WorkingDirectories: []protocol.URI{"file:///a", "file:///b"}}
	for _, tc := range []struct {
		version string
		want    string
	}{
		{"0.5.1", `{"channel":"ahp-session:/s","workingDirectory":"file:///a"}`},
		{"0.6.0", `{"channel":"ahp-session:/s","workingDirectory":"file:///a"}`},
		{"0.7.0", `{"channel":"ahp-session:/s","workingDirectories":["file:///a","file:///b"]}`},
		{"1.0.0", `{"channel":"ahp-session:/s","workingDirectories":["file:///a","file:///b"]}`},
	} {
		if got := encodeJSON(t, view.For(tc.version).Params(p)); got != tc.want {
			t.Errorf("%s createSession: %s, want %s", tc.version, got, tc.want)
		}
	}
	if p.WorkingDirectories == nil || p.WorkingDirectory != nil {
		t.Error("Params changed its input")
	}
	sub := &protocol.SubscribeParams{Channel: chatURI, FlowControl: &protocol.SubscriptionFlowControlOptions{}}
	if got := view.For("0.8.0").Params(sub).(*protocol.SubscribeParams); got.FlowControl != nil {
		t.Error("0.8.0 subscribe keeps flowControl")
	}
	if got := view.For("1.0.0").Params(sub); got != any(sub) {
		t.Error("1.0.0 subscribe changed")
	}
	changed := &protocol.SessionSummaryChangedParams{Channel: protocol.RootURI, Session: sessionURI, Changes: protocol.SessionSummaryChangedParamsChanges{WorkingDirectory: protocol.Ptr("file:///w")}}
	up := view.For("0.6.0").UpNotification(changed).(*protocol.SessionSummaryChangedParams)
	if up.Changes.WorkingDirectory != nil || len(up.Changes.WorkingDirectories) != 1 || up.Changes.WorkingDirectories[0] != "file:///w" {
		t.Errorf("0.6.0 summary change came up as %+v", up.Changes)
	}
	raw, err := view.For("0.8.0").UpNotificationJSON("auth/required", jsontext.Value(`{"channel":"ahp-root://","resource":"https://r"}`))
	if err != nil || string(raw) != `{"channel":"ahp-root://","resource":{"resource":"https://r"}}` {
		t.Errorf("0.8.0 auth/required came up as %s, %v", raw, err)
	}
	already := jsontext.Value(`{"channel":"ahp-root://","resource":{"resource":"https://r"}}`)
	if raw, err := view.For("1.0.0").UpNotificationJSON("auth/required", already); err != nil || string(raw) != string(already) {
		t.Errorf("1.0.0 auth/required changed: %s, %v", raw, err)
	}
}
