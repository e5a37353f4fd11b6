package reducer_test

import (
	"strings"
	"testing"
)

// Table tests for the actions the 1.x era added, each from its schema
// description (the 0.8.0 fixtures know none of them).

const (
	chatErrorPart     = `{"kind":"error","error":{"errorType":"x","message":"boom"}}`
	chatResumablePart = `{"kind":"error","error":{"errorType":"x","message":"boom"},"resumable":true}`
	chatShell         = `{"kind":"shell","id":"w1","label":"build","startedAt":"1970-01-01T00:00:02.000Z","command":"make"}`
)

// chatFailed returns a chat whose latest turn t1 stopped at an error with
// the given last part.
func chatFailed(last string) string {
	return chatWith(2, `"turns":[{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","duration":5,"message":{"text":"Hi","origin":{"kind":"user"}},`+
		`"responseParts":[`+chatMarkdown+`,`+last+`],"usage":{"inputTokens":3},"state":"error"}]`)
}

func TestChatTurnResume(t *testing.T) {
	runChannelCases(t, "ChatState", []channelCase{{
		// ChatTurnResumeAction: "reopens the same turn with its existing
		// message, response parts, and usage intact".
		name:    "a resumable error reopens the turn",
		initial: chatFailed(chatResumablePart),
		actions: []string{`{"type":"chat/turnResume","turnId":"t1"}`},
		want: chatWith(8, `"activeTurn":{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","message":{"text":"Hi","origin":{"kind":"user"}},`+
			`"responseParts":[`+chatMarkdown+`,`+chatResumablePart+`],"usage":{"inputTokens":3}}`),
	}, {
		// ErrorResponsePart.resumable: "Only true enables resume."
		name:    "an error that is not resumable stays",
		initial: chatFailed(chatErrorPart),
		actions: []string{`{"type":"chat/turnResume","turnId":"t1"}`},
		want:    chatFailed(chatErrorPart),
		same:    true,
	}, {
		name:    "only the latest turn resumes",
		initial: strings.Replace(chatFailed(chatResumablePart), `"state":"error"}]`, `"state":"error"},{"id":"t2","message":{"text":"Next","origin":{"kind":"user"}},"responseParts":[],"state":"complete"}]`, 1),
		actions: []string{`{"type":"chat/turnResume","turnId":"t1"}`},
		want:    strings.Replace(chatFailed(chatResumablePart), `"state":"error"}]`, `"state":"error"},{"id":"t2","message":{"text":"Next","origin":{"kind":"user"}},"responseParts":[],"state":"complete"}]`, 1),
		same:    true,
	}, {
		name:    "an unknown turn changes nothing",
		initial: chatFailed(chatResumablePart),
		actions: []string{`{"type":"chat/turnResume","turnId":"nope"}`},
		want:    chatFailed(chatResumablePart),
		same:    true,
	}, {
		// The error part the host sends ends the turn like chat/error did
		// before, as the durable record of the error.
		name:    "chat/error appends its part",
		initial: chatActive(8, chatMarkdown),
		actions: []string{`{"type":"chat/error","turnId":"t1","duration":5,"part":` + chatResumablePart + `}`},
		want: strings.Replace(chatWith(2, `"turns":[{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","duration":5,"message":{"text":"Hi","origin":{"kind":"user"}},`+
			`"responseParts":[`+chatMarkdown+`,`+chatResumablePart+`],"state":"error"}]`), `"modifiedAt":"1970-01-01T00:00:01.000Z"`, `"modifiedAt":"1970-01-01T00:00:01.005Z"`, 1),
	}})
}

func TestChatFlagsAndLists(t *testing.T) {
	runChannelCases(t, "ChatState", []channelCase{{
		// ChatIsReadChangedAction changes only the chat's read flag.
		name:    "isRead sets and clears the flag, keeping activity and archived",
		initial: chatWith(1|64, ""),
		actions: []string{`{"type":"chat/isReadChanged","isRead":true}`},
		want:    chatWith(1|32|64, ""),
	}, {
		name:    "isRead false clears it",
		initial: chatWith(8|32, ""),
		actions: []string{`{"type":"chat/isReadChanged","isRead":false}`},
		want:    chatWith(8, ""),
	}, {
		name:    "isArchived sets and clears the flag",
		initial: chatWith(1|32, ""),
		actions: []string{`{"type":"chat/isArchivedChanged","isArchived":true}`, `{"type":"chat/isArchivedChanged","isArchived":false}`, `{"type":"chat/isArchivedChanged","isArchived":true}`},
		want:    chatWith(1|32|64, ""),
	}, {
		// ChatMovableChangedAction; ChatState.movable: absence means false.
		name:    "movable is set",
		initial: chatWith(1, ""),
		actions: []string{`{"type":"chat/movableChanged","movable":true}`, `{"type":"chat/movableChanged","movable":false}`},
		want:    chatWith(1, `"movable":false`),
	}, {
		// ChatChangesetsChangedAction: full replacement; absent clears.
		name:    "changesets are replaced and cleared",
		initial: chatWith(1, `"changesets":[{"label":"Old","uriTemplate":"ahp-changeset:/old","changeKind":"branch"}]`),
		actions: []string{`{"type":"chat/changesetsChanged","changesets":[{"label":"New","uriTemplate":"ahp-changeset:/new","changeKind":"uncommitted"}]}`},
		want:    chatWith(1, `"changesets":[{"label":"New","uriTemplate":"ahp-changeset:/new","changeKind":"uncommitted"}]`),
	}, {
		name:    "changesets without a list are cleared",
		initial: chatWith(1, `"changesets":[{"label":"Old","uriTemplate":"ahp-changeset:/old","changeKind":"branch"}]`),
		actions: []string{`{"type":"chat/changesetsChanged"}`},
		want:    chatWith(1, ""),
	}, {
		// ChatCanvasesChangedAction: full replacement; absent clears.
		name:    "canvases are replaced and cleared",
		initial: chatWith(1, ""),
		actions: []string{`{"type":"chat/canvasesChanged","canvases":[{"resource":"ahp-canvas:/a"}]}`, `{"type":"chat/canvasesChanged","canvases":[{"resource":"ahp-canvas:/b"}]}`},
		want:    chatWith(1, `"canvases":[{"resource":"ahp-canvas:/b"}]`),
	}, {
		// ChatBackgroundWorkSetAction: "adds or replaces ... by id".
		name:    "background work is added, then replaced in place",
		initial: chatWith(1, `"backgroundWork":[`+chatShell+`]`),
		actions: []string{
			`{"type":"chat/backgroundWorkSet","work":{"kind":"subagent","id":"w2","label":"review","startedAt":"1970-01-01T00:00:03.000Z","chat":"ahp-chat:/sub"}}`,
			`{"type":"chat/backgroundWorkSet","work":` + strings.Replace(chatShell, `"build"`, `"build again"`, 1) + `}`,
		},
		want: chatWith(1, `"backgroundWork":[`+strings.Replace(chatShell, `"build"`, `"build again"`, 1)+`,{"kind":"subagent","id":"w2","label":"review","startedAt":"1970-01-01T00:00:03.000Z","chat":"ahp-chat:/sub"}]`),
	}, {
		// ChatBackgroundWorkRemovedAction: unknown ids are a no-op.
		name:    "background work is removed by id",
		initial: chatWith(1, `"backgroundWork":[`+chatShell+`]`),
		actions: []string{`{"type":"chat/backgroundWorkRemoved","id":"nope"}`, `{"type":"chat/backgroundWorkRemoved","id":"w1"}`},
		want:    chatWith(1, ""),
	}, {
		// BackgroundWork: clients that do not know a kind keep the entry.
		name:    "background work of an unknown kind is kept",
		initial: chatWith(1, ""),
		actions: []string{`{"type":"chat/backgroundWorkSet","work":{"kind":"x-later","id":"w9","label":"?","startedAt":"s"}}`},
		want:    chatWith(1, `"backgroundWork":[{"kind":"x-later","id":"w9","label":"?","startedAt":"s"}]`),
	}})
}

const (
	sessionChatA = `{"resource":"ahp-chat:/a","title":"A","status":1,"modifiedAt":"m"}`
	sessionChatB = `{"resource":"ahp-chat:/b","title":"B","status":1,"modifiedAt":"m"}`
	sessionChatC = `{"resource":"ahp-chat:/c","title":"C","status":1,"modifiedAt":"m"}`
)

func TestSessionNewActions(t *testing.T) {
	chats := func(list ...string) string { return sessionJSON(`"chats":[` + strings.Join(list, ",") + `]`) }
	dirs := func(list ...string) string {
		return sessionJSON(`"workingDirectories":["` + strings.Join(list, `","`) + `"]`)
	}
	runChannelCases(t, "SessionState", []channelCase{{
		// SessionChatsReorderedAction: the complete resulting order.
		name:    "chats are reordered keeping each summary",
		initial: chats(sessionChatA, sessionChatB, sessionChatC),
		actions: []string{`{"type":"session/chatsReordered","chats":["ahp-chat:/c","ahp-chat:/a","ahp-chat:/b"]}`},
		want:    chats(sessionChatC, sessionChatA, sessionChatB),
	}, {
		// "Invalid or incomplete orders are ignored."
		name:    "an incomplete order is ignored",
		initial: chats(sessionChatA, sessionChatB, sessionChatC),
		actions: []string{`{"type":"session/chatsReordered","chats":["ahp-chat:/c","ahp-chat:/a"]}`},
		want:    chats(sessionChatA, sessionChatB, sessionChatC),
		same:    true,
	}, {
		name:    "an order naming a chat twice or an unknown chat is ignored",
		initial: chats(sessionChatA, sessionChatB),
		actions: []string{`{"type":"session/chatsReordered","chats":["ahp-chat:/a","ahp-chat:/a"]}`, `{"type":"session/chatsReordered","chats":["ahp-chat:/a","ahp-chat:/x"]}`},
		want:    chats(sessionChatA, sessionChatB),
		same:    true,
	}, {
		// SessionWorkingDirectoryReplacedAction, with its own examples.
		name:    "a directory is replaced in place",
		initial: dirs("file:///a", "file:///b", "file:///c"),
		actions: []string{`{"type":"session/workingDirectoryReplaced","directory":"file:///b","replacement":"file:///x"}`},
		want:    dirs("file:///a", "file:///x", "file:///c"),
	}, {
		name:    "[A, B, C] with B to C becomes [A, C]",
		initial: dirs("file:///a", "file:///b", "file:///c"),
		actions: []string{`{"type":"session/workingDirectoryReplaced","directory":"file:///b","replacement":"file:///c"}`},
		want:    dirs("file:///a", "file:///c"),
	}, {
		name:    "[A, B, C] with C to A becomes [A, B]",
		initial: dirs("file:///a", "file:///b", "file:///c"),
		actions: []string{`{"type":"session/workingDirectoryReplaced","directory":"file:///c","replacement":"file:///a"}`},
		want:    dirs("file:///a", "file:///b"),
	}, {
		name:    "replacing a directory that is not there is a no-op",
		initial: dirs("file:///a"),
		actions: []string{`{"type":"session/workingDirectoryReplaced","directory":"file:///z","replacement":"file:///x"}`},
		want:    dirs("file:///a"),
		same:    true,
	}, {
		// SessionMcpServerBackgroundRequestedAction: a starting, blocking
		// server stops blocking; anything else is a no-op.
		name:    "a blocking starting server is backgrounded",
		initial: sessionJSON(`"customizations":[` + strings.Replace(sessionTopMcp, `{"kind":"ready"}`, `{"kind":"starting","blocking":true}`, 1) + `]`),
		actions: []string{`{"type":"session/mcpServerBackgroundRequested","id":"mcp-top"}`},
		want:    sessionJSON(`"customizations":[` + strings.Replace(sessionTopMcp, `{"kind":"ready"}`, `{"kind":"starting","blocking":false}`, 1) + `]`),
	}, {
		name:    "a child server is found inside its container",
		initial: sessionJSON(`"customizations":[` + strings.Replace(sessionPlugin, `{"kind":"ready"}`, `{"kind":"starting","blocking":true}`, 1) + `]`),
		actions: []string{`{"type":"session/mcpServerBackgroundRequested","id":"mcp-child"}`},
		want:    sessionJSON(`"customizations":[` + strings.Replace(sessionPlugin, `{"kind":"ready"}`, `{"kind":"starting","blocking":false}`, 1) + `]`),
	}, {
		name:    "a ready server is left alone",
		initial: sessionJSON(`"customizations":[` + sessionTopMcp + `]`),
		actions: []string{`{"type":"session/mcpServerBackgroundRequested","id":"mcp-top"}`, `{"type":"session/mcpServerBackgroundRequested","id":"skill-1"}`},
		want:    sessionJSON(`"customizations":[` + sessionTopMcp + `]`),
		same:    true,
	}})
}

func TestCanvasAndAutomations(t *testing.T) {
	runChannelCases(t, "CanvasState", []channelCase{{
		// CanvasStateChangedAction: full replacement.
		name:    "canvas state is replaced",
		initial: `{"instanceId":"i","extensionId":"e","canvasId":"c","title":"Old"}`,
		actions: []string{`{"type":"canvas/stateChanged","canvas":{"instanceId":"i","extensionId":"e","canvasId":"c","status":"ready"}}`},
		want:    `{"instanceId":"i","extensionId":"e","canvasId":"c","status":"ready"}`,
	}})
	entry := func(uri, title string) string {
		return `{"resource":"` + uri + `","definition":{"title":"` + title + `","message":{"text":"go","origin":{"kind":"automation"}},"session":{},"enabled":true,"triggers":[]},` +
			`"runs":[],"operations":[],"createdAt":"c","modifiedAt":"m"}`
	}
	catalogue := func(entries ...string) string { return `{"entries":[` + strings.Join(entries, ",") + `]}` }
	runChannelCases(t, "AutomationState", []channelCase{{
		// AutomationSetAction: matched by resource and replaced in place;
		// a new resource is appended.
		name:    "automations are appended and replaced in place",
		initial: catalogue(entry("ahp-automation:/a", "A"), entry("ahp-automation:/b", "B")),
		actions: []string{`{"type":"automation/set","automation":` + entry("ahp-automation:/c", "C") + `}`, `{"type":"automation/set","automation":` + entry("ahp-automation:/a", "A2") + `}`},
		want:    catalogue(entry("ahp-automation:/a", "A2"), entry("ahp-automation:/b", "B"), entry("ahp-automation:/c", "C")),
	}, {
		// AutomationRemovedAction: an unknown resource is a no-op.
		name:    "an automation is removed",
		initial: catalogue(entry("ahp-automation:/a", "A")),
		actions: []string{`{"type":"automation/removed","resource":"ahp-automation:/x"}`, `{"type":"automation/removed","resource":"ahp-automation:/a"}`},
		want:    catalogue(),
	}, {
		// The create and update requests leave the catalogue unchanged.
		name:    "requests change nothing",
		initial: catalogue(entry("ahp-automation:/a", "A")),
		actions: []string{`{"type":"automation/createRequested","resource":"ahp-automation:/n","definition":{"title":"N","message":{"text":"go","origin":{"kind":"user"}},"session":{},"enabled":true,"triggers":[]}}`, `{"type":"automation/updateRequested","resource":"ahp-automation:/a","changes":{"title":"Z"}}`},
		want:    catalogue(entry("ahp-automation:/a", "A")),
		same:    true,
	}})
	run := func(members string) string {
		return `{"resource":"ahp-automation-run:/r","automation":"ahp-automation:/a","origin":{"kind":"manual"},"lifecycle":{"status":"pending","createdAt":"c"},` + members + `}`
	}
	runChannelCases(t, "AutomationRunState", []channelCase{{
		name:    "the lifecycle is replaced",
		initial: run(`"sessions":[]`),
		actions: []string{`{"type":"automationRun/lifecycleChanged","lifecycle":{"status":"running","createdAt":"c","startedAt":"s"}}`},
		want:    strings.Replace(run(`"sessions":[]`), `{"status":"pending","createdAt":"c"}`, `{"status":"running","createdAt":"c","startedAt":"s"}`, 1),
	}, {
		// AutomationRunSessionSetAction: URIs are unique.
		name:    "sessions are linked once",
		initial: run(`"sessions":["ahp-session:/1"]`),
		actions: []string{`{"type":"automationRun/sessionSet","session":"ahp-session:/2"}`, `{"type":"automationRun/sessionSet","session":"ahp-session:/1"}`},
		want:    run(`"sessions":["ahp-session:/1","ahp-session:/2"]`),
	}, {
		// AutomationRunSessionRemovedAction: removing the primary clears it.
		name:    "removing the primary session clears it",
		initial: run(`"sessions":["ahp-session:/1","ahp-session:/2"],"primarySession":"ahp-session:/2"`),
		actions: []string{`{"type":"automationRun/sessionRemoved","session":"ahp-session:/9"}`, `{"type":"automationRun/sessionRemoved","session":"ahp-session:/2"}`},
		want:    run(`"sessions":["ahp-session:/1"]`),
	}, {
		// AutomationRunPrimarySessionChangedAction: omitted clears.
		name:    "the primary session is set and cleared",
		initial: run(`"sessions":["ahp-session:/1"]`),
		actions: []string{`{"type":"automationRun/primarySessionChanged","primarySession":"ahp-session:/1"}`, `{"type":"automationRun/primarySessionChanged"}`, `{"type":"automationRun/primarySessionChanged","primarySession":"ahp-session:/1"}`},
		want:    run(`"sessions":["ahp-session:/1"],"primarySession":"ahp-session:/1"`),
	}, {
		name:    "a cancel request changes nothing",
		initial: run(`"sessions":[]`),
		actions: []string{`{"type":"automationRun/cancelRequested"}`},
		want:    run(`"sessions":[]`),
		same:    true,
	}})
}
