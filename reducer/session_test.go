package reducer_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// sessionJSON returns a ready, idle session state without chats or
// clients, with members (the inside of a JSON object) added or replacing
// its own.
func sessionJSON(members string) string {
	state := map[string]json.RawMessage{
		"provider":      json.RawMessage(`"copilot"`),
		"title":         json.RawMessage(`"S"`),
		"status":        json.RawMessage(`1`),
		"lifecycle":     json.RawMessage(`"ready"`),
		"activeClients": json.RawMessage(`[]`),
		"chats":         json.RawMessage(`[]`),
	}
	if members != "" {
		if err := json.Unmarshal([]byte("{"+members+"}"), &state); err != nil {
			panic(err)
		}
	}
	b, err := json.Marshal(state)
	if err != nil {
		panic(err)
	}
	return string(b)
}

const (
	sessionChat1 = `{"resource":"ahp-chat:/c1","title":"One","status":1,"modifiedAt":"1970-01-01T00:00:01.000Z"}`
	sessionChat2 = `{"resource":"ahp-chat:/c2","title":"Two","status":8,"activity":"Thinking","modifiedAt":"1970-01-01T00:00:02.000Z","origin":{"kind":"user"}}`
	sessionChat3 = `{"resource":"ahp-chat:/c3","title":"Three","status":1,"modifiedAt":"1970-01-01T00:00:03.000Z"}`
)

// Chat catalog mutations: specification/session-channel.md, "Chat catalog
// mutations".
func TestSessionChatCatalog(t *testing.T) {
	runChannelCases(t, "SessionState", []channelCase{{
		name:    "chatAdded appends after the existing chats",
		initial: sessionJSON(`"chats":[` + sessionChat1 + `,` + sessionChat2 + `]`),
		actions: []string{`{"type":"session/chatAdded","summary":` + sessionChat3 + `}`},
		want:    sessionJSON(`"chats":[` + sessionChat1 + `,` + sessionChat2 + `,` + sessionChat3 + `]`),
	}, {
		name:    "chatAdded for a known chat replaces it where it stands",
		initial: sessionJSON(`"chats":[` + sessionChat1 + `,` + sessionChat2 + `,` + sessionChat3 + `]`),
		actions: []string{`{"type":"session/chatAdded","summary":{"resource":"ahp-chat:/c2","title":"Two again","status":1,"modifiedAt":"1970-01-01T00:00:05.000Z"}}`},
		// A full replacement: activity and origin of the old entry go.
		want: sessionJSON(`"chats":[` + sessionChat1 + `,{"resource":"ahp-chat:/c2","title":"Two again","status":1,"modifiedAt":"1970-01-01T00:00:05.000Z"},` + sessionChat3 + `]`),
	}, {
		name:    "chatUpdated changes only the fields it carries",
		initial: sessionJSON(`"chats":[` + sessionChat1 + `,` + sessionChat2 + `]`),
		actions: []string{`{"type":"session/chatUpdated","chat":"ahp-chat:/c2","changes":{"title":"Renamed"}}`},
		want:    sessionJSON(`"chats":[` + sessionChat1 + `,{"resource":"ahp-chat:/c2","title":"Renamed","status":8,"activity":"Thinking","modifiedAt":"1970-01-01T00:00:02.000Z","origin":{"kind":"user"}}]`),
	}, {
		name:    "chatUpdated merges every non-identity field",
		initial: sessionJSON(`"chats":[` + sessionChat1 + `]`),
		actions: []string{`{"type":"session/chatUpdated","chat":"ahp-chat:/c1","changes":{"status":8,"activity":"Reading","modifiedAt":"1970-01-01T00:00:04.000Z","interactivity":"readOnly","workingDirectories":["file:///a"],"origin":{"kind":"fork","chat":"ahp-chat:/c0","turnId":"t1"}}}`},
		want:    sessionJSON(`"chats":[{"resource":"ahp-chat:/c1","title":"One","status":8,"activity":"Reading","modifiedAt":"1970-01-01T00:00:04.000Z","interactivity":"readOnly","workingDirectories":["file:///a"],"origin":{"kind":"fork","chat":"ahp-chat:/c0","turnId":"t1"}}]`),
	}, {
		name:    "chatUpdated clears optional fields sent as null",
		initial: `{"provider":"p","title":"t","status":1,"lifecycle":"ready","activeClients":[],"chats":[{"resource":"ahp-chat:/c1","title":"One","status":1,"activity":"Reading","interactivity":"read-only","modifiedAt":"1970-01-01T00:00:01.000Z"}]}`,
		actions: []string{`{"type":"session/chatUpdated","chat":"ahp-chat:/c1","changes":{"activity":null,"interactivity":null,"title":null}}`},
		want:    `{"provider":"p","title":"t","status":1,"lifecycle":"ready","activeClients":[],"chats":[{"resource":"ahp-chat:/c1","title":"One","status":1,"modifiedAt":"1970-01-01T00:00:01.000Z"}]}`,
	}, {
		// The resource is the entry's identity; changes MUST NOT carry it,
		// and one that does cannot move the entry.
		name:    "chatUpdated ignores a resource in its changes",
		initial: sessionJSON(`"chats":[` + sessionChat1 + `]`),
		actions: []string{`{"type":"session/chatUpdated","chat":"ahp-chat:/c1","changes":{"resource":"ahp-chat:/moved","title":"Kept"}}`},
		want:    sessionJSON(`"chats":[{"resource":"ahp-chat:/c1","title":"Kept","status":1,"modifiedAt":"1970-01-01T00:00:01.000Z"}]`),
	}, {
		name:    "chatUpdated for an unknown chat returns the same state",
		initial: sessionJSON(`"chats":[` + sessionChat1 + `]`),
		actions: []string{`{"type":"session/chatUpdated","chat":"ahp-chat:/nope","changes":{"title":"X"}}`},
		want:    sessionJSON(`"chats":[` + sessionChat1 + `]`),
		same:    true,
	}, {
		name:    "chatRemoved of another chat keeps defaultChat",
		initial: sessionJSON(`"chats":[` + sessionChat1 + `,` + sessionChat2 + `],"defaultChat":"ahp-chat:/c1"`),
		actions: []string{`{"type":"session/chatRemoved","chat":"ahp-chat:/c2"}`},
		want:    sessionJSON(`"chats":[` + sessionChat1 + `],"defaultChat":"ahp-chat:/c1"`),
	}, {
		name:    "chatRemoved of the default chat clears defaultChat",
		initial: sessionJSON(`"chats":[` + sessionChat1 + `,` + sessionChat2 + `],"defaultChat":"ahp-chat:/c2"`),
		actions: []string{`{"type":"session/chatRemoved","chat":"ahp-chat:/c2"}`},
		want:    sessionJSON(`"chats":[` + sessionChat1 + `]`),
	}, {
		name:    "chatRemoved of the last chat leaves an empty catalog",
		initial: sessionJSON(`"chats":[` + sessionChat1 + `],"defaultChat":"ahp-chat:/c1"`),
		actions: []string{`{"type":"session/chatRemoved","chat":"ahp-chat:/c1"}`},
		want:    sessionJSON(`"chats":[]`),
	}, {
		name:    "a chat removed and added again comes back at the end",
		initial: sessionJSON(`"chats":[` + sessionChat1 + `,` + sessionChat2 + `]`),
		actions: []string{
			`{"type":"session/chatRemoved","chat":"ahp-chat:/c1"}`,
			`{"type":"session/chatAdded","summary":` + sessionChat1 + `}`,
		},
		want: sessionJSON(`"chats":[` + sessionChat2 + `,` + sessionChat1 + `]`),
	}, {
		// The reducer applies the hint as given; rejecting a chat that is
		// not in the catalog is the host's validation ("Server Validation
		// of Client Actions").
		name:    "defaultChatChanged sets the hint without checking the catalog",
		initial: sessionJSON(""),
		actions: []string{`{"type":"session/defaultChatChanged","defaultChat":"ahp-chat:/c9"}`},
		want:    sessionJSON(`"defaultChat":"ahp-chat:/c9"`),
	}})
}

// The status bit set: guide/state-model.md, "Session Status Bitset". Bits
// 0-4 are the activity, bits 5 and up are flags combined with it by OR.
func TestSessionStatusFlags(t *testing.T) {
	runChannelCases(t, "SessionState", []channelCase{{
		name:    "isRead sets its bit beside an activity and another flag",
		initial: sessionJSON(`"status":72`), // InProgress | IsArchived
		actions: []string{`{"type":"session/isReadChanged","isRead":true}`},
		want:    sessionJSON(`"status":104`),
	}, {
		name:    "isRead false clears only its bit",
		initial: sessionJSON(`"status":97`), // Idle | IsRead | IsArchived
		actions: []string{`{"type":"session/isReadChanged","isRead":false}`},
		want:    sessionJSON(`"status":65`),
	}, {
		name:    "isArchived is idempotent",
		initial: sessionJSON(`"status":24`),
		actions: []string{
			`{"type":"session/isArchivedChanged","isArchived":true}`,
			`{"type":"session/isArchivedChanged","isArchived":true}`,
		},
		want: sessionJSON(`"status":88`),
	}, {
		name:    "isArchived false on a session that is not archived changes nothing",
		initial: sessionJSON(`"status":2`),
		actions: []string{`{"type":"session/isArchivedChanged","isArchived":false}`},
		want:    sessionJSON(`"status":2`),
	}, {
		name:    "bits this package does not know are kept",
		initial: sessionJSON(`"status":129`), // Idle | 1<<7
		actions: []string{`{"type":"session/isReadChanged","isRead":true}`},
		want:    sessionJSON(`"status":161`),
	}})
}

const (
	sessionChatInput   = `{"kind":"chatInput","id":"c1#r1","chat":"ahp-chat:/c1","request":{"id":"r1","message":"Which?"}}`
	sessionClientExec  = `{"kind":"toolClientExecution","id":"c1#t2","chat":"ahp-chat:/c1","turnId":"turn-1","clientId":"vscode","toolCall":{"status":"running","toolCallId":"t2","toolName":"run","displayName":"Run","invocationMessage":"Run it","confirmed":"not-needed","contributor":{"kind":"client","clientId":"vscode"}}}`
	sessionToolAuth    = `{"kind":"toolAuthentication","id":"c1#t3","chat":"ahp-chat:/c1","turnId":"turn-1","toolCall":{"status":"auth-required","toolCallId":"t3","toolName":"search","displayName":"Search","invocationMessage":"Search","confirmed":"not-needed","contributor":{"kind":"mcp","customizationId":"mcp-1"},"auth":{"reason":"required","resource":{"resource":"https://mcp.example"}}}}`
	sessionFutureInput = `{"kind":"somethingNew","id":"c1#x","chat":"ahp-chat:/c1","extra":true}`
)

// The inputNeeded roll-up: specification/session-channel.md, "Aggregated
// input requests": while the list holds an entry waiting on the user, the
// session's status carries InputNeeded.
func TestSessionInputNeeded(t *testing.T) {
	runChannelCases(t, "SessionState", []channelCase{{
		name:    "a request on an idle session replaces the activity with InputNeeded",
		initial: sessionJSON(`"status":33`), // Idle | IsRead
		actions: []string{`{"type":"session/inputNeededSet","request":` + sessionChatInput + `}`},
		want:    sessionJSON(`"status":56,"inputNeeded":[` + sessionChatInput + `]`),
	}, {
		name:    "a tool authentication waits on the user",
		initial: sessionJSON(`"status":8`),
		actions: []string{`{"type":"session/inputNeededSet","request":` + sessionToolAuth + `}`},
		want:    sessionJSON(`"status":24,"inputNeeded":[` + sessionToolAuth + `]`),
	}, {
		name:    "removing the last blocking entry falls back to InProgress",
		initial: sessionJSON(`"status":24,"inputNeeded":[` + sessionToolAuth + `]`),
		actions: []string{`{"type":"session/inputNeededRemoved","id":"c1#t3"}`},
		want:    sessionJSON(`"status":8`),
	}, {
		// Only the InputNeeded-specific bit is cleared: an activity other
		// than InputNeeded is none of this list's business.
		name:    "removing a client execution from an idle session keeps it idle",
		initial: sessionJSON(`"status":1,"inputNeeded":[` + sessionClientExec + `]`),
		actions: []string{`{"type":"session/inputNeededRemoved","id":"c1#t2"}`},
		want:    sessionJSON(`"status":1`),
	}, {
		name:    "an upsert keeps the entry's place",
		initial: sessionJSON(`"status":24,"inputNeeded":[` + sessionChatInput + `,` + sessionToolAuth + `]`),
		actions: []string{`{"type":"session/inputNeededSet","request":{"kind":"chatInput","id":"c1#r1","chat":"ahp-chat:/c1","request":{"id":"r1","message":"Which one?"}}}`},
		want:    sessionJSON(`"status":24,"inputNeeded":[{"kind":"chatInput","id":"c1#r1","chat":"ahp-chat:/c1","request":{"id":"r1","message":"Which one?"}},` + sessionToolAuth + `]`),
	}, {
		name:    "an entry of an unknown kind waits on the user and is removed by id",
		initial: sessionJSON(`"status":8`),
		actions: []string{
			`{"type":"session/inputNeededSet","request":` + sessionFutureInput + `}`,
			`{"type":"session/inputNeededSet","request":{"kind":"somethingNew","id":"c1#x","chat":"ahp-chat:/c1","extra":false}}`,
			`{"type":"session/inputNeededRemoved","id":"c1#x"}`,
		},
		want: sessionJSON(`"status":8`),
	}, {
		name:    "an entry of an unknown kind is kept verbatim",
		initial: sessionJSON(`"status":8`),
		actions: []string{`{"type":"session/inputNeededSet","request":` + sessionFutureInput + `}`},
		want:    sessionJSON(`"status":24,"inputNeeded":[` + sessionFutureInput + `]`),
	}})
}

// Active clients: guide/customizations.md, "Client-Provided Tools": one
// entry per clientId, re-published whole to change its tools.
func TestSessionActiveClients(t *testing.T) {
	vscode := `{"clientId":"vscode","displayName":"VS Code","tools":[]}`
	cli := `{"clientId":"cli","tools":[]}`
	runChannelCases(t, "SessionState", []channelCase{{
		name:    "activeClientSet replaces a client where it stands",
		initial: sessionJSON(`"activeClients":[` + vscode + `,` + cli + `]`),
		actions: []string{`{"type":"session/activeClientSet","activeClient":{"clientId":"vscode","tools":[{"name":"open","description":"Open"}],"customizations":[{"type":"plugin","id":"p1","uri":"virtual://p1","name":"P1","enabled":true,"nonce":"n1"}]}}`},
		// Replaced whole: the display name it no longer sends is gone.
		want: sessionJSON(`"activeClients":[{"clientId":"vscode","tools":[{"name":"open","description":"Open"}],"customizations":[{"type":"plugin","id":"p1","uri":"virtual://p1","name":"P1","enabled":true,"nonce":"n1"}]},` + cli + `]`),
	}, {
		name:    "activeClientSet appends a new client",
		initial: sessionJSON(`"activeClients":[` + vscode + `]`),
		actions: []string{`{"type":"session/activeClientSet","activeClient":` + cli + `}`},
		want:    sessionJSON(`"activeClients":[` + vscode + `,` + cli + `]`),
	}, {
		name:    "removing the last client leaves an empty list",
		initial: sessionJSON(`"activeClients":[` + cli + `]`),
		actions: []string{`{"type":"session/activeClientRemoved","clientId":"cli"}`},
		want:    sessionJSON(`"activeClients":[]`),
	}})
}

// Working directories: guide/state-model.md, "Managing directories after
// creation": the reducer applies the actions verbatim; guarding an
// immutable primary directory is the host's job.
func TestSessionWorkingDirectories(t *testing.T) {
	runChannelCases(t, "SessionState", []channelCase{{
		name:    "the first directory can be removed",
		initial: sessionJSON(`"workingDirectories":["file:///primary","file:///b"]`),
		actions: []string{`{"type":"session/workingDirectoryRemoved","directory":"file:///primary"}`},
		want:    sessionJSON(`"workingDirectories":["file:///b"]`),
	}, {
		name:    "a directory already present returns the same state",
		initial: sessionJSON(`"workingDirectories":["file:///a"]`),
		actions: []string{`{"type":"session/workingDirectorySet","directory":"file:///a"}`},
		want:    sessionJSON(`"workingDirectories":["file:///a"]`),
		same:    true,
	}})
}

const (
	sessionTopMcp = `{"type":"mcpServer","id":"mcp-top","uri":"https://mcp.example","name":"Top","enabled":true,"state":{"kind":"ready"},"channel":"mcp://top"}`
	sessionPlugin = `{"type":"plugin","id":"plugin-a","uri":"https://plugins.example/a","name":"A","enabled":false,"children":[` +
		`{"type":"skill","id":"skill-1","uri":"https://plugins.example/a#lint","name":"lint"},` +
		`{"type":"mcpServer","id":"mcp-child","uri":"https://plugins.example/a#mcp","name":"Child","enabled":true,"state":{"kind":"ready"},"channel":"mcp://child"}]}`
)

// Customizations: guide/customizations.md, "Toggling", "Server-Side
// Updates"; MCP servers: guide/mcp.md.
func TestSessionCustomizations(t *testing.T) {
	runChannelCases(t, "SessionState", []channelCase{{
		// 1.x (SessionCustomizationToggledAction): plugins and MCP servers
		// keep the decisions, which replace the previous ones entirely.
		name:    "a top-level MCP server keeps the toggle's decisions",
		initial: sessionJSON(`"customizations":[` + sessionTopMcp + `]`),
		actions: []string{`{"type":"session/customizationToggled","id":"mcp-top","enablement":[{"kind":"session","enabled":false},{"kind":"global","enabled":true}]}`},
		want: sessionJSON(`"customizations":[` + strings.Replace(sessionTopMcp, `"enabled":true`,
			`"enablement":[{"kind":"session","enabled":false},{"kind":"global","enabled":true}]`, 1) + `]`),
	}, {
		// An older version's flag is one decision for the session.
		name:    "an older version's toggle is a session decision",
		initial: sessionJSON(`"customizations":[` + sessionTopMcp + `]`),
		actions: []string{`{"type":"session/customizationToggled","id":"mcp-top","enabled":false}`},
		want:    sessionJSON(`"customizations":[` + strings.Replace(sessionTopMcp, `"enabled":true`, `"enablement":[{"kind":"session","enabled":false}]`, 1) + `]`),
	}, {
		// Entries other than plugins and MCP servers take the decisive
		// (first) decision as their flag.
		name:    "a child skill takes the first decision as its flag",
		initial: sessionJSON(`"customizations":[` + sessionPlugin + `]`),
		actions: []string{`{"type":"session/customizationToggled","id":"skill-1","enablement":[{"kind":"workspace","uri":"file:///w","enabled":true},{"kind":"global","enabled":false}]}`},
		want:    sessionJSON(`"customizations":[` + strings.Replace(sessionPlugin, `"name":"lint"`, `"name":"lint","enabled":true`, 1) + `]`),
	}, {
		// A child's effective state is container.enabled && child.enabled:
		// toggling the child records its own flag and leaves the disabled
		// container alone.
		name:    "toggling a child of a disabled container sets only the child",
		initial: sessionJSON(`"customizations":[` + sessionPlugin + `]`),
		actions: []string{`{"type":"session/customizationToggled","id":"skill-1","enabled":true}`},
		want:    sessionJSON(`"customizations":[` + strings.Replace(sessionPlugin, `"name":"lint"`, `"name":"lint","enabled":true`, 1) + `]`),
	}, {
		name:    "an MCP server child is toggled",
		initial: sessionJSON(`"customizations":[` + sessionPlugin + `]`),
		actions: []string{`{"type":"session/customizationToggled","id":"mcp-child","enablement":[{"kind":"session","enabled":false}]}`},
		want:    sessionJSON(`"customizations":[` + strings.Replace(sessionPlugin, `"name":"Child","enabled":true`, `"name":"Child","enablement":[{"kind":"session","enabled":false}]`, 1) + `]`),
	}, {
		name:    "customizationUpdated replaces a container with its children",
		initial: sessionJSON(`"customizations":[` + sessionTopMcp + `,` + sessionPlugin + `]`),
		actions: []string{`{"type":"session/customizationUpdated","customization":{"type":"plugin","id":"plugin-a","uri":"https://plugins.example/a","name":"A2","enabled":true}}`},
		want:    sessionJSON(`"customizations":[` + sessionTopMcp + `,{"type":"plugin","id":"plugin-a","uri":"https://plugins.example/a","name":"A2","enabled":true}]`),
	}, {
		name:    "removing every child leaves an empty, parsed container",
		initial: sessionJSON(`"customizations":[` + sessionPlugin + `]`),
		actions: []string{
			`{"type":"session/customizationRemoved","id":"skill-1"}`,
			`{"type":"session/customizationRemoved","id":"mcp-child"}`,
		},
		want: sessionJSON(`"customizations":[{"type":"plugin","id":"plugin-a","uri":"https://plugins.example/a","name":"A","enabled":false,"children":[]}]`),
	}, {
		name:    "a customization of an unknown type is replaced and removed by id",
		initial: sessionJSON(`"customizations":[{"type":"widget","id":"w1","v":1},` + sessionTopMcp + `]`),
		actions: []string{
			`{"type":"session/customizationUpdated","customization":{"type":"widget","id":"w1","v":2}}`,
			`{"type":"session/customizationRemoved","id":"w1"}`,
		},
		want: sessionJSON(`"customizations":[` + sessionTopMcp + `]`),
	}, {
		name:    "toggling a customization of an unknown type returns the same state",
		initial: sessionJSON(`"customizations":[{"type":"widget","id":"w1","enabled":true}]`),
		actions: []string{`{"type":"session/customizationToggled","id":"w1","enabled":false}`},
		want:    sessionJSON(`"customizations":[{"type":"widget","id":"w1","enabled":true}]`),
		same:    true,
	}, {
		// mcpServerStateChanged carries the whole runtime picture: a state
		// without a channel means the server no longer offers one.
		name:    "mcpServerStateChanged without a channel clears it",
		initial: sessionJSON(`"customizations":[` + sessionTopMcp + `]`),
		actions: []string{`{"type":"session/mcpServerStateChanged","id":"mcp-top","state":{"kind":"error","error":{"errorType":"crash","message":"exited"}}}`},
		want:    sessionJSON(`"customizations":[{"type":"mcpServer","id":"mcp-top","uri":"https://mcp.example","name":"Top","enabled":true,"state":{"kind":"error","error":{"errorType":"crash","message":"exited"}}}]`),
	}, {
		name:    "a start request for a customization that is not an MCP server returns the same state",
		initial: sessionJSON(`"customizations":[` + sessionPlugin + `]`),
		actions: []string{`{"type":"session/mcpServerStartRequested","id":"skill-1"}`},
		want:    sessionJSON(`"customizations":[` + sessionPlugin + `]`),
		same:    true,
	}, {
		name:    "stop then start a nested server",
		initial: sessionJSON(`"customizations":[` + sessionPlugin + `]`),
		actions: []string{
			`{"type":"session/mcpServerStopRequested","id":"mcp-child"}`,
			`{"type":"session/mcpServerStartRequested","id":"mcp-child"}`,
		},
		want: sessionJSON(`"customizations":[` + strings.Replace(sessionPlugin, `"state":{"kind":"ready"},"channel":"mcp://child"`, `"state":{"kind":"starting"}`, 1) + `]`),
	}})
}

func TestSessionMisc(t *testing.T) {
	schema := `"schema":{"type":"object","properties":{"mode":{"type":"string","title":"Mode","enum":["a","b"]}}}`
	runChannelCases(t, "SessionState", []channelCase{{
		name:    "an action of another channel returns the same state",
		initial: sessionJSON(""),
		actions: []string{`{"type":"root/activeSessionsChanged","activeSessions":3}`},
		want:    sessionJSON(""),
		same:    true,
	}, {
		name:    "an unknown session action returns the same state",
		initial: sessionJSON(""),
		actions: []string{`{"type":"session/fromTheFuture","x":1}`},
		want:    sessionJSON(""),
		same:    true,
	}, {
		name:    "configChanged replacing with nothing leaves no values",
		initial: sessionJSON(`"config":{` + schema + `,"values":{"mode":"a"}}`),
		actions: []string{`{"type":"session/configChanged","config":{},"replace":true}`},
		want:    sessionJSON(`"config":{` + schema + `,"values":{}}`),
	}, {
		name:    "metaChanged without _meta clears it",
		initial: sessionJSON(`"_meta":{"k":1}`),
		actions: []string{`{"type":"session/metaChanged"}`},
		want:    sessionJSON(""),
	}, {
		// 1.x renamed the lifecycle creationFailed to failed.
		name:    "creationFailed after ready records the error",
		initial: sessionJSON(""),
		actions: []string{`{"type":"session/creationFailed","error":{"errorType":"init","message":"boom"}}`},
		want:    `{"provider":"copilot","title":"S","status":1,"lifecycle":"failed","creationError":{"errorType":"init","message":"boom"},"activeClients":[],"chats":[]}`,
	}})
}

func TestSessionNilState(t *testing.T) {
	var s *protocol.SessionState
	if got := reducer.Session(s, &protocol.SessionReadyAction{}); got != nil {
		t.Errorf("Session(nil) = %v, want nil", got)
	}
}

// Reducers may run on the same input state from many goroutines (the
// package documentation); run with -race.
func TestSessionConcurrent(t *testing.T) {
	v, err := protocol.Decode("SessionState", []byte(sessionJSON(`"chats":[`+sessionChat1+`,`+sessionChat2+`],"customizations":[`+sessionPlugin+`]`)))
	if err != nil {
		t.Fatal(err)
	}
	s := v.(*protocol.SessionState)
	before := channelMarshal(t, s)
	actions := []protocol.StateAction{
		&protocol.SessionChatUpdatedAction{Chat: "ahp-chat:/c1", Changes: protocol.SessionChatUpdatedActionChanges{Title: protocol.Ptr("T")}},
		&protocol.SessionChatRemovedAction{Chat: "ahp-chat:/c2"},
		&protocol.SessionCustomizationToggledAction{ID: "skill-1", Enabled: protocol.Ptr(true)},
		&protocol.SessionMCPServerStopRequestedAction{ID: "mcp-child"},
		&protocol.SessionIsReadChangedAction{IsRead: true},
	}
	var wg sync.WaitGroup
	for range 8 {
		for _, a := range actions {
			wg.Go(func() { reducer.Session(s, a) })
		}
	}
	wg.Wait()
	if after := channelMarshal(t, s); after != before {
		t.Errorf("input modified:\nbefore %s\nafter  %s", before, after)
	}
}
