package reducer_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/internal/fixture"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// These tests cover rules of the chat channel that the conformance
// fixtures leave out. States and actions are written as wire JSON; each
// case names the page and section of the specification it follows.

// chatClock stamps modifiedAt with 1970-01-01T00:00:09.999Z.
var chatClock = reducer.Reducer{Now: func() time.Time { return time.UnixMilli(9999) }}

// chatWith returns a chat state in JSON with the given status and members
// (a JSON object body, may be empty), and no turns unless members has
// some.
func chatWith(status int, members string) string {
	if !strings.Contains(members, `"turns":`) {
		members = strings.TrimSuffix(`"turns":[],`+members, ",")
	}
	return fmt.Sprintf(`{"resource":"ahp-chat:/c1","title":"Chat","status":%d,"modifiedAt":"1970-01-01T00:00:01.000Z",%s}`, status, members)
}

// chatActive returns an in-progress chat whose active turn t1 has the
// given response parts (a JSON array body).
func chatActive(status int, parts string) string {
	return chatWith(status, `"activeTurn":{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","message":{"text":"Hi","origin":{"kind":"user"}},"responseParts":[`+parts+`]}`)
}

// Parts and tool calls used by the cases below.
const (
	chatMarkdown  = `{"kind":"markdown","id":"md","content":"Hello"}`
	chatReasoning = `{"kind":"reasoning","id":"r","content":"Hmm"}`
	chatOpenInput = `{"kind":"inputRequest","request":{"id":"in1","message":"Which?"}}`
	chatDoneInput = `{"kind":"inputRequest","request":{"id":"in0","message":"Done"},"response":"accept"}`
)

func chatToolCall(state string) string {
	return `{"kind":"toolCall","toolCall":{"toolCallId":"tc1","toolName":"bash","displayName":"Run",` + state + `}}`
}

var (
	chatStreamingTool   = chatToolCall(`"status":"streaming"`)
	chatPendingTool     = chatToolCall(`"status":"pending-confirmation","invocationMessage":"Run ls","options":[{"id":"yes","label":"Yes","kind":"approve"}]`)
	chatRunningTool     = chatToolCall(`"status":"running","invocationMessage":"Run ls","confirmed":"user-action"`)
	chatPendingResult   = chatToolCall(`"status":"pending-result-confirmation","invocationMessage":"Run ls","confirmed":"user-action","success":true,"pastTenseMessage":"Ran ls"`)
	chatAuthRequired    = chatToolCall(`"status":"auth-required","contributor":{"kind":"mcp","customizationId":"mcp-1"},"invocationMessage":"Run ls","confirmed":"user-action","auth":{"reason":"required","resource":{"resource":"https://mcp.example"}}`)
	chatCompletedTool   = chatToolCall(`"status":"completed","invocationMessage":"Run ls","confirmed":"user-action","success":true,"pastTenseMessage":"Ran ls"`)
	chatPendingRefInput = chatToolCall(`"status":"pending-confirmation","invocationMessage":"Run","toolInput":{"uri":"file:///inputs/tc1.json"},"editable":true`)
)

func TestChatRules(t *testing.T) {
	tests := []struct {
		name    string
		initial string
		actions []string
		// want holds the members of the final state to check; null means
		// the member must be absent.
		want string
	}{
		// state-model.md, "Session Status Bitset": the activity bits are
		// exclusive and the flags above them orthogonal; IsRead clears
		// when a turn starts or an input request arrives.
		{
			name:    "turn start keeps archived flag and clears read",
			initial: chatWith(1|32|64, ""),
			actions: []string{`{"type":"chat/turnStarted","turnId":"t1","startedAt":"1970-01-01T00:00:02.000Z","message":{"text":"Hi","origin":{"kind":"user"}}}`},
			want:    `{"status":72}`,
		},
		{
			name:    "input request clears read flag",
			initial: chatActive(8|32|64, ""),
			actions: []string{`{"type":"chat/inputRequested","request":{"id":"in1","message":"Which?"}}`},
			want:    `{"status":88,"modifiedAt":"1970-01-01T00:00:01.000Z"}`,
		},
		{
			name:    "error keeps flags",
			initial: chatActive(8|64, ""),
			actions: []string{`{"type":"chat/error","turnId":"t1","duration":5,"error":{"errorType":"x","message":"boom"}}`},
			want:    `{"status":66,"activeTurn":null}`,
		},
		{
			name:    "next turn leaves the error activity",
			initial: chatWith(2|64, ""),
			actions: []string{`{"type":"chat/turnStarted","turnId":"t2","startedAt":"1970-01-01T00:00:02.000Z","message":{"text":"Again","origin":{"kind":"user"}}}`},
			want:    `{"status":72}`,
		},
		// state-model.md, "Chat Truncation": an active turn is dropped and
		// the chat returns to idle; only clearing everything drops the
		// cursor to older turns.
		{
			name:    "truncation while waiting for input returns to idle",
			initial: chatActive(24, chatOpenInput),
			actions: []string{`{"type":"chat/truncated"}`},
			want:    `{"status":1,"activeTurn":null,"turns":[]}`,
		},
		{
			name: "truncation to a turn keeps the cursor",
			initial: chatWith(1, `"turnsNextCursor":"older","turns":[`+
				`{"id":"a","message":{"text":"A","origin":{"kind":"user"}},"responseParts":[],"state":"complete"},`+
				`{"id":"b","message":{"text":"B","origin":{"kind":"user"}},"responseParts":[],"state":"complete"}]`),
			actions: []string{`{"type":"chat/truncated","turnId":"a"}`},
			want:    `{"turnsNextCursor":"older","turns":[{"id":"a","message":{"text":"A","origin":{"kind":"user"}},"responseParts":[],"state":"complete"}]}`,
		},
		// elicitation.md, "Status And Cleanup": the chat needs input while
		// any request is open, and returns to in progress when the last
		// one is answered.
		{
			name:    "answering one of two requests still needs input",
			initial: chatActive(24, chatOpenInput+`,{"kind":"inputRequest","request":{"id":"in2","message":"And?"}}`),
			actions: []string{`{"type":"chat/inputCompleted","requestId":"in1","response":"accept"}`},
			want:    `{"status":24}`,
		},
		{
			name:    "answering the last request resumes",
			initial: chatActive(24, chatOpenInput+`,{"kind":"inputRequest","request":{"id":"in2","message":"And?"}}`),
			actions: []string{
				`{"type":"chat/inputCompleted","requestId":"in1","response":"accept"}`,
				`{"type":"chat/inputCompleted","requestId":"in2","response":"cancel"}`,
			},
			want: `{"status":8}`,
		},
		// state-model.md, "Session Status Bitset": a tool call awaiting
		// confirmation also means input needed.
		{
			name:    "a pending tool call still needs input after the request is answered",
			initial: chatActive(24, chatOpenInput+","+chatPendingTool),
			actions: []string{`{"type":"chat/inputCompleted","requestId":"in1","response":"decline"}`},
			want:    `{"status":24}`,
		},
		{
			name:    "confirming the last blocker resumes",
			initial: chatActive(24, chatOpenInput+","+chatPendingTool),
			actions: []string{
				`{"type":"chat/inputCompleted","requestId":"in1","response":"decline"}`,
				`{"type":"chat/toolCallConfirmed","turnId":"t1","toolCallId":"tc1","approved":true,"confirmed":"user-action"}`,
			},
			want: `{"status":8}`,
		},
		// elicitation.md, "Status And Cleanup": an unanswered request
		// stays in the transcript, without a response, however the turn
		// ends.
		{
			name:    "cancelled turn keeps an unanswered request",
			initial: chatActive(24, chatOpenInput),
			actions: []string{`{"type":"chat/turnCancelled","turnId":"t1","duration":5}`},
			want: `{"status":1,"turns":[{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","duration":5,"message":{"text":"Hi","origin":{"kind":"user"}},
				"responseParts":[` + chatOpenInput + `],"state":"cancelled"}]}`,
		},
		{
			// 1.x: the error is a durable response part appended to the
			// turn (ChatErrorAction.part), not a member of the turn.
			name:    "failed turn keeps an unanswered request",
			initial: chatActive(24, chatOpenInput),
			actions: []string{`{"type":"chat/error","turnId":"t1","duration":5,"part":{"kind":"error","error":{"errorType":"x","message":"boom"}}}`},
			want: `{"status":2,"turns":[{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","duration":5,"message":{"text":"Hi","origin":{"kind":"user"}},
				"responseParts":[` + chatOpenInput + `,{"kind":"error","error":{"errorType":"x","message":"boom"}}],"state":"error"}]}`,
		},
		{
			name:    "an older version's error becomes the error part",
			initial: chatActive(24, chatOpenInput),
			actions: []string{`{"type":"chat/error","turnId":"t1","duration":5,"error":{"errorType":"x","message":"boom"}}`},
			want: `{"status":2,"turns":[{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","duration":5,"message":{"text":"Hi","origin":{"kind":"user"}},
				"responseParts":[` + chatOpenInput + `,{"kind":"error","error":{"errorType":"x","message":"boom"}}],"state":"error"}]}`,
		},
		// elicitation.md, "Durable Record": an answered request is the
		// record of the exchange; a new request with the same id opens a
		// new part instead of rewriting the record.
		{
			name:    "re-requesting an answered id opens a new part",
			initial: chatActive(8, `{"kind":"inputRequest","request":{"id":"in1","message":"Which?"},"response":"accept"}`),
			actions: []string{`{"type":"chat/inputRequested","request":{"id":"in1","message":"Again?"}}`},
			want: `{"status":24,"activeTurn":{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","message":{"text":"Hi","origin":{"kind":"user"}},"responseParts":[
				{"kind":"inputRequest","request":{"id":"in1","message":"Which?"},"response":"accept"},
				{"kind":"inputRequest","request":{"id":"in1","message":"Again?"}}]}}`,
		},
		// state-model.md, "Tool Call Lifecycle": when a turn ends, every
		// tool call that has not completed or been cancelled is cancelled
		// as skipped, keeping its invocation message and input.
		{
			name:    "turn end skips tool calls waiting on the user",
			initial: chatActive(24, chatPendingTool+","+strings.ReplaceAll(chatPendingResult, "tc1", "tc2")+","+strings.ReplaceAll(chatCompletedTool, "tc1", "tc3")),
			actions: []string{`{"type":"chat/turnComplete","turnId":"t1","duration":5}`},
			want: `{"status":1,"turns":[{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","duration":5,"message":{"text":"Hi","origin":{"kind":"user"}},"state":"complete","responseParts":[
				` + chatToolCall(`"status":"cancelled","invocationMessage":"Run ls","reason":"skipped"`) + `,
				` + strings.ReplaceAll(chatToolCall(`"status":"cancelled","invocationMessage":"Run ls","reason":"skipped"`), "tc1", "tc2") + `,
				` + strings.ReplaceAll(chatCompletedTool, "tc1", "tc3") + `]}]}`,
		},
		// state-model.md, "Editable Parameters": edited input replaces
		// inline input; referenced input keeps its reference, whose
		// content the host replaces.
		{
			name:    "edited input keeps a reference",
			initial: chatActive(24, chatPendingRefInput),
			actions: []string{`{"type":"chat/toolCallConfirmed","turnId":"t1","toolCallId":"tc1","approved":true,"confirmed":"user-action","editedToolInput":"{\"cmd\":\"ls\"}"}`},
			want: `{"status":8,"activeTurn":{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","message":{"text":"Hi","origin":{"kind":"user"}},"responseParts":[
				` + chatToolCall(`"status":"running","invocationMessage":"Run","toolInput":{"uri":"file:///inputs/tc1.json"},"confirmed":"user-action"`) + `]}}`,
		},
		{
			name:    "edited input without earlier input is inline",
			initial: chatActive(24, chatPendingTool),
			actions: []string{`{"type":"chat/toolCallConfirmed","turnId":"t1","toolCallId":"tc1","approved":true,"confirmed":"setting","editedToolInput":"ls -l"}`},
			want: `{"activeTurn":{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","message":{"text":"Hi","origin":{"kind":"user"}},"responseParts":[
				` + chatToolCall(`"status":"running","invocationMessage":"Run ls","toolInput":"ls -l","confirmed":"setting"`) + `]}}`,
		},
		// state-model.md, "Confirmation Options": the reducer records the
		// option the id names; an id naming no offered option records
		// none.
		{
			name:    "unknown option id records no option",
			initial: chatActive(24, chatPendingTool),
			actions: []string{`{"type":"chat/toolCallConfirmed","turnId":"t1","toolCallId":"tc1","approved":false,"reason":"skipped","selectedOptionId":"nope"}`},
			want: `{"activeTurn":{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","message":{"text":"Hi","origin":{"kind":"user"}},"responseParts":[
				` + chatToolCall(`"status":"cancelled","invocationMessage":"Run ls","reason":"skipped"`) + `]}}`,
		},
		// state-model.md, "States": partial input accumulates over the
		// deltas that carry parameter content.
		{
			name:    "tool call deltas accumulate partial input",
			initial: chatActive(8, chatStreamingTool),
			actions: []string{
				`{"type":"chat/toolCallDelta","turnId":"t1","toolCallId":"tc1","content":"{\"cmd\":"}`,
				`{"type":"chat/toolCallDelta","turnId":"t1","toolCallId":"tc1","invocationMessage":"Running"}`,
				`{"type":"chat/toolCallDelta","turnId":"t1","toolCallId":"tc1","content":"\"ls\"}"}`,
			},
			want: `{"activeTurn":{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","message":{"text":"Hi","origin":{"kind":"user"}},"responseParts":[
				` + chatToolCall(`"status":"streaming","partialInput":"{\"cmd\":\"ls\"}","invocationMessage":"Running"`) + `]}}`,
		},
		// chat-channel.md, "Tool call metadata refinement": refinements
		// other than client ownership apply, such as naming the MCP
		// server that owns the tool; a ready without a contributor keeps
		// the one the tool call has.
		{
			name: "ready refines the MCP owner and keeps an unnamed contributor",
			initial: chatActive(8, strings.ReplaceAll(chatStreamingTool, `"status"`, `"contributor":{"kind":"mcp","customizationId":"mcp-1"},"status"`)+","+
				strings.ReplaceAll(strings.ReplaceAll(chatStreamingTool, "tc1", "tc2"), `"status"`, `"contributor":{"kind":"client","clientId":"c1"},"status"`)),
			actions: []string{
				`{"type":"chat/toolCallReady","turnId":"t1","toolCallId":"tc1","contributor":{"kind":"mcp","customizationId":"mcp-2"},"invocationMessage":"Run","confirmed":"not-needed"}`,
				`{"type":"chat/toolCallReady","turnId":"t1","toolCallId":"tc2","invocationMessage":"Run","confirmed":"not-needed"}`,
			},
			want: `{"activeTurn":{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","message":{"text":"Hi","origin":{"kind":"user"}},"responseParts":[
				` + chatToolCall(`"status":"running","contributor":{"kind":"mcp","customizationId":"mcp-2"},"invocationMessage":"Run","confirmed":"not-needed"`) + `,
				` + strings.ReplaceAll(chatToolCall(`"status":"running","contributor":{"kind":"client","clientId":"c1"},"invocationMessage":"Run","confirmed":"not-needed"`), "tc1", "tc2") + `]}}`,
		},
		{
			name:    "an MCP tool cannot become client-owned",
			initial: chatActive(8, strings.ReplaceAll(chatStreamingTool, `"status"`, `"contributor":{"kind":"mcp","customizationId":"mcp-1"},"status"`)),
			actions: []string{`{"type":"chat/toolCallReady","turnId":"t1","toolCallId":"tc1","contributor":{"kind":"client","clientId":"c1"},"invocationMessage":"Run","confirmed":"not-needed"}`},
			want: `{"activeTurn":{"id":"t1","startedAt":"1970-01-01T00:00:01.000Z","message":{"text":"Hi","origin":{"kind":"user"}},"responseParts":[
				` + chatToolCall(`"status":"running","contributor":{"kind":"mcp","customizationId":"mcp-1"},"invocationMessage":"Run","confirmed":"not-needed"`) + `]}}`,
		},
		// actions.md, "Client-Dispatched Actions": reordering ignores
		// unknown ids and keeps unmentioned messages at the end; a
		// repeated id places its message once.
		{
			name: "reorder with a repeated id",
			initial: chatWith(1, `"queuedMessages":[{"id":"a","message":{"text":"A","origin":{"kind":"user"}}},`+
				`{"id":"b","message":{"text":"B","origin":{"kind":"user"}}},{"id":"c","message":{"text":"C","origin":{"kind":"user"}}}]`),
			actions: []string{`{"type":"chat/queuedMessagesReordered","order":["b","x","b","a"]}`},
			want: `{"queuedMessages":[{"id":"b","message":{"text":"B","origin":{"kind":"user"}}},{"id":"a","message":{"text":"A","origin":{"kind":"user"}}},
				{"id":"c","message":{"text":"C","origin":{"kind":"user"}}}]}`,
		},
		// chat-channel.md, "Per-chat working directory": an absent subset
		// means every directory of the session, so removing the last
		// directory leaves an empty subset, not an absent one.
		{
			name:    "removing the last working directory leaves an empty subset",
			initial: chatWith(1, `"workingDirectories":["file:///a"]`),
			actions: []string{`{"type":"chat/workingDirectoryRemoved","directory":"file:///a"}`},
			want:    `{"workingDirectories":[]}`,
		},
		// state-model.md, "Steering Message": one at a time, and one set
		// while a turn runs waits for the server to consume it.
		{
			name:    "steering message set during a turn",
			initial: chatActive(8, chatMarkdown),
			actions: []string{
				`{"type":"chat/pendingMessageSet","kind":"steering","id":"s1","message":{"text":"Focus","origin":{"kind":"user"}}}`,
				`{"type":"chat/pendingMessageSet","kind":"steering","id":"s2","message":{"text":"Refocus","origin":{"kind":"user"}}}`,
			},
			want: `{"status":8,"steeringMessage":{"id":"s2","message":{"text":"Refocus","origin":{"kind":"user"}}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := chatApply(t, chatState(t, tt.initial), tt.actions...)
			chatCheck(t, s, tt.want)
		})
	}
}

// TestChatNoOps checks that actions that do not apply return the state
// itself, not an equal copy.
func TestChatNoOps(t *testing.T) {
	tests := []struct {
		name, initial, action string
	}{
		{"unknown action", chatActive(8, chatMarkdown), `{"type":"chat/somethingNew","turnId":"t1"}`},
		{"another channel's action", chatActive(8, chatMarkdown), `{"type":"session/titleChanged","title":"T"}`},
		{"delta for another turn", chatActive(8, chatMarkdown), `{"type":"chat/delta","turnId":"t0","partId":"md","content":"x"}`},
		{"delta into a reasoning part", chatActive(8, chatReasoning), `{"type":"chat/delta","turnId":"t1","partId":"r","content":"x"}`},
		{"reasoning into a markdown part", chatActive(8, chatMarkdown), `{"type":"chat/reasoning","turnId":"t1","partId":"md","content":"x"}`},
		{"response part without a turn", chatWith(1, ""), `{"type":"chat/responsePart","turnId":"t1","part":` + chatMarkdown + `}`},
		{"usage for another turn", chatActive(8, ""), `{"type":"chat/usage","turnId":"t0","usage":{"inputTokens":1}}`},
		{"turn complete for another turn", chatActive(8, ""), `{"type":"chat/turnComplete","turnId":"t0","duration":1}`},
		{"turn cancelled without a turn", chatWith(1, ""), `{"type":"chat/turnCancelled","turnId":"t1","duration":1}`},
		{"truncate to an unknown turn", chatActive(8, ""), `{"type":"chat/truncated","turnId":"nope"}`},
		{"tool call start for another turn", chatActive(8, ""), `{"type":"chat/toolCallStart","turnId":"t0","toolCallId":"tc1","toolName":"x","displayName":"X"}`},
		{"confirm a running tool call", chatActive(8, chatRunningTool), `{"type":"chat/toolCallConfirmed","turnId":"t1","toolCallId":"tc1","approved":true,"confirmed":"user-action"}`},
		{"confirm an unknown tool call", chatActive(24, chatPendingTool), `{"type":"chat/toolCallConfirmed","turnId":"t1","toolCallId":"tc9","approved":true,"confirmed":"user-action"}`},
		{"ready for a completed tool call", chatActive(8, chatCompletedTool), `{"type":"chat/toolCallReady","turnId":"t1","toolCallId":"tc1","invocationMessage":"Again"}`},
		{"content for a pending tool call", chatActive(24, chatPendingTool), `{"type":"chat/toolCallContentChanged","turnId":"t1","toolCallId":"tc1","content":[]}`},
		{"successful result while waiting for auth", chatActive(24, chatAuthRequired), `{"type":"chat/toolCallComplete","turnId":"t1","toolCallId":"tc1","result":{"success":true,"pastTenseMessage":"Done"}}`},
		{"auth for a tool without a contributor", chatActive(8, chatRunningTool), `{"type":"chat/toolCallAuthRequired","turnId":"t1","toolCallId":"tc1","auth":{"reason":"required","resource":{"resource":"https://mcp.example"}}}`},
		{"result confirmation for a running tool", chatActive(8, chatRunningTool), `{"type":"chat/toolCallResultConfirmed","turnId":"t1","toolCallId":"tc1","approved":true}`},
		{"input request without a turn", chatWith(1, ""), `{"type":"chat/inputRequested","request":{"id":"in1"}}`},
		{"answer to an answered request", chatActive(8, chatDoneInput), `{"type":"chat/inputAnswerChanged","requestId":"in0","questionId":"q","answer":{"state":"skipped"}}`},
		{"completing an answered request", chatActive(8, chatDoneInput), `{"type":"chat/inputCompleted","requestId":"in0","response":"cancel"}`},
		{"remove another steering message", chatWith(1, `"steeringMessage":{"id":"s1","message":{"text":"S","origin":{"kind":"user"}}}`), `{"type":"chat/pendingMessageRemoved","kind":"steering","id":"s2"}`},
		{"remove an unknown queued message", chatWith(1, `"queuedMessages":[{"id":"q1","message":{"text":"Q","origin":{"kind":"user"}}}]`), `{"type":"chat/pendingMessageRemoved","kind":"queued","id":"q2"}`},
		{"set a message of an unknown kind", chatWith(1, ""), `{"type":"chat/pendingMessageSet","kind":"later","id":"p1","message":{"text":"P","origin":{"kind":"user"}}}`},
		{"reorder without a queue", chatWith(1, ""), `{"type":"chat/queuedMessagesReordered","order":["a"]}`},
		{"add a working directory already there", chatWith(1, `"workingDirectories":["file:///a"]`), `{"type":"chat/workingDirectorySet","directory":"file:///a"}`},
		{"remove a working directory not there", chatWith(1, `"workingDirectories":["file:///a"]`), `{"type":"chat/workingDirectoryRemoved","directory":"file:///b"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := chatState(t, tt.initial)
			if got := chatClock.Chat(s, chatAction(t, tt.action)); got != s {
				t.Errorf("got a new state, want the same one")
			}
		})
	}
	if got := chatClock.Chat(nil, &protocol.ChatDraftChangedAction{}); got != nil {
		t.Errorf("nil state: got %v, want nil", got)
	}
}

// TestChatModifiedAt checks where modifiedAt comes from since 0.9.0: the
// actions' own data, never a clock (spec-1.1 CHANGELOG, 0.9.0: "Chat
// reducers now derive modifiedAt from turn action data instead of local
// wall clocks"). A turn's start sets it to startedAt, a turn's end to its
// start plus duration; nothing else changes it.
func TestChatModifiedAt(t *testing.T) {
	initial := chatActive(24, chatMarkdown+","+chatReasoning+","+chatPendingTool+","+chatOpenInput)
	const unchanged = "1970-01-01T00:00:01.000Z"
	tests := []struct {
		action string
		want   string
	}{
		{`{"type":"chat/turnStarted","turnId":"t2","startedAt":"1970-01-01T00:00:02.000Z","message":{"text":"Hi","origin":{"kind":"user"}}}`, "1970-01-01T00:00:02.000Z"},
		{`{"type":"chat/turnComplete","turnId":"t1","duration":1500}`, "1970-01-01T00:00:02.500Z"},
		{`{"type":"chat/turnCancelled","turnId":"t1","duration":1}`, "1970-01-01T00:00:01.001Z"},
		{`{"type":"chat/error","turnId":"t1","duration":2000,"part":{"kind":"error","error":{"errorType":"x","message":"y"}}}`, "1970-01-01T00:00:03.000Z"},
		{`{"type":"chat/truncated"}`, unchanged},
		{`{"type":"chat/inputRequested","request":{"id":"in2"}}`, unchanged},
		{`{"type":"chat/inputAnswerChanged","requestId":"in1","questionId":"q","answer":{"state":"skipped"}}`, unchanged},
		{`{"type":"chat/inputCompleted","requestId":"in1","response":"accept"}`, unchanged},
		{`{"type":"chat/delta","turnId":"t1","partId":"md","content":"x"}`, unchanged},
		{`{"type":"chat/reasoning","turnId":"t1","partId":"r","content":"x"}`, unchanged},
		{`{"type":"chat/responsePart","turnId":"t1","part":{"kind":"markdown","id":"md2","content":""}}`, unchanged},
		{`{"type":"chat/usage","turnId":"t1","usage":{"inputTokens":1}}`, unchanged},
		{`{"type":"chat/toolCallStart","turnId":"t1","toolCallId":"tc2","toolName":"x","displayName":"X"}`, unchanged},
		{`{"type":"chat/toolCallConfirmed","turnId":"t1","toolCallId":"tc1","approved":true,"confirmed":"user-action"}`, unchanged},
		{`{"type":"chat/activityChanged","activity":"Thinking"}`, unchanged},
		{`{"type":"chat/draftChanged","draft":{"text":"D","origin":{"kind":"user"}}}`, unchanged},
		{`{"type":"chat/pendingMessageSet","kind":"queued","id":"q1","message":{"text":"Q","origin":{"kind":"user"}}}`, unchanged},
		{`{"type":"chat/turnsLoaded","turns":[]}`, unchanged},
		{`{"type":"chat/workingDirectorySet","directory":"file:///a"}`, unchanged},
	}
	for _, tt := range tests {
		a := chatAction(t, tt.action)
		t.Run(a.Type(), func(t *testing.T) {
			s := chatState(t, initial)
			got := chatClock.Chat(s, a)
			if got == s {
				t.Fatal("the action did not apply")
			}
			if got.ModifiedAt != tt.want {
				t.Errorf("modifiedAt = %s, want %s", got.ModifiedAt, tt.want)
			}
		})
	}
}

// TestChatDuration checks that a duration that is not a non-negative
// number is recorded as zero. (JSON cannot carry NaN; Go callers can.)
func TestChatDuration(t *testing.T) {
	for _, d := range []float64{-1, math.NaN(), math.Inf(-1)} {
		s := chatClock.Chat(chatState(t, chatActive(8, "")), &protocol.ChatTurnCompleteAction{TurnID: "t1", Duration: d})
		if got := *s.Turns[0].Duration; got != 0 {
			t.Errorf("duration %v recorded as %v, want 0", d, got)
		}
	}
}

// TestChatBranches applies different actions to the same state and checks
// that the results do not share anything one of them changes, and that
// the state they came from is unchanged: a client that rolls back an
// optimistic action keeps using the older state.
func TestChatBranches(t *testing.T) {
	t.Run("streaming", func(t *testing.T) {
		base := chatState(t, chatActive(8, chatMarkdown))
		delta := func(s *protocol.ChatState, text string) *protocol.ChatState {
			return chatClock.Chat(s, &protocol.ChatDeltaAction{TurnID: "t1", PartID: "md", Content: text})
		}
		a := delta(delta(base, ", world"), "!")
		b := delta(delta(base, " there"), "?")
		a2 := delta(a, " And more.")
		b = delta(b, " Or less.")
		chatWantText(t, base, "Hello")
		chatWantText(t, a, "Hello, world!")
		chatWantText(t, a2, "Hello, world! And more.")
		chatWantText(t, b, "Hello there? Or less.")
	})
	t.Run("history", func(t *testing.T) {
		// Spare capacity in the history must not be written into: both
		// branches below would add their turn at the same index.
		base := chatState(t, chatActive(8, ""))
		base.Turns = make([]protocol.Turn, 0, 8)
		done := chatClock.Chat(base, &protocol.ChatTurnCompleteAction{TurnID: "t1", Duration: 1})
		failed := chatClock.Chat(base, &protocol.ChatErrorAction{TurnID: "t1", Duration: 1, Error: &protocol.ErrorInfo{ErrorType: "x", Message: "y"}})
		if done.Turns[0].State != protocol.TurnStateComplete || failed.Turns[0].State != protocol.TurnStateError {
			t.Errorf("turn states: %s and %s, want complete and error", done.Turns[0].State, failed.Turns[0].State)
		}
	})
	t.Run("truncation", func(t *testing.T) {
		s := chatState(t, chatWith(1, ""))
		for _, id := range []string{"a", "b", "c"} {
			s = chatApply(t, s,
				`{"type":"chat/turnStarted","turnId":"`+id+`","startedAt":"1970-01-01T00:00:02.000Z","message":{"text":"`+id+`","origin":{"kind":"user"}}}`,
				`{"type":"chat/turnComplete","turnId":"`+id+`","duration":1}`)
		}
		cut := chatApply(t, s, `{"type":"chat/truncated","turnId":"a"}`,
			`{"type":"chat/turnStarted","turnId":"d","startedAt":"1970-01-01T00:00:02.000Z","message":{"text":"d","origin":{"kind":"user"}}}`,
			`{"type":"chat/turnComplete","turnId":"d","duration":1}`)
		if got := chatTurnIDs(s); got != "a b c" {
			t.Errorf("original history became %q", got)
		}
		if got := chatTurnIDs(cut); got != "a d" {
			t.Errorf("truncated history is %q, want \"a d\"", got)
		}
	})
}

// TestChatConcurrent reduces the same state from several goroutines, as
// the package documentation allows; run it with -race.
func TestChatConcurrent(t *testing.T) {
	base := chatState(t, chatActive(8, chatMarkdown))
	var wg sync.WaitGroup
	results := make([]*protocol.ChatState, 8)
	for g := range results {
		wg.Go(func() {
			s := base
			for range 500 {
				s = chatClock.Chat(s, &protocol.ChatDeltaAction{TurnID: "t1", PartID: "md", Content: fmt.Sprint(g)})
			}
			results[g] = s
		})
	}
	wg.Wait()
	chatWantText(t, base, "Hello")
	for g, s := range results {
		chatWantText(t, s, "Hello"+strings.Repeat(fmt.Sprint(g), 500))
	}
}

// Helpers.

func chatState(t *testing.T, data string) *protocol.ChatState {
	t.Helper()
	v, err := protocol.Decode("ChatState", []byte(data))
	if err != nil {
		t.Fatalf("decode state: %v\n%s", err, data)
	}
	return v.(*protocol.ChatState)
}

func chatAction(t *testing.T, data string) protocol.StateAction {
	t.Helper()
	a, err := protocol.UnmarshalStateAction([]byte(data))
	if err != nil {
		t.Fatalf("decode action: %v\n%s", err, data)
	}
	return a
}

// chatApply applies the actions in order and checks along the way that no
// state it started from changed.
func chatApply(t *testing.T, s *protocol.ChatState, actions ...string) *protocol.ChatState {
	t.Helper()
	for _, data := range actions {
		before := chatJSON(t, s)
		next := chatClock.Chat(s, chatAction(t, data))
		if after := chatJSON(t, s); after != before {
			t.Fatalf("applying %s modified the state:\nbefore %s\nafter  %s", data, before, after)
		}
		s = next
	}
	return s
}

// chatCheck compares the members of s that want names with want, ignoring
// null members on both sides (a null in want requires the member absent).
func chatCheck(t *testing.T, s *protocol.ChatState, want string) {
	t.Helper()
	var wantMembers map[string]json.RawMessage
	if err := json.Unmarshal([]byte(want), &wantMembers); err != nil {
		t.Fatalf("want: %v\n%s", err, want)
	}
	var gotMembers map[string]json.RawMessage
	if err := json.Unmarshal([]byte(chatJSON(t, s)), &gotMembers); err != nil {
		t.Fatal(err)
	}
	picked := make(map[string]json.RawMessage, len(wantMembers))
	for k := range wantMembers {
		picked[k] = gotMembers[k]
		if picked[k] == nil {
			picked[k] = json.RawMessage("null")
		}
	}
	got, err := json.Marshal(picked)
	if err != nil {
		t.Fatal(err)
	}
	diff, err := fixture.Diff([]byte(want), got, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}

func chatJSON(t *testing.T, s *protocol.ChatState) string {
	t.Helper()
	b, err := protocol.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// chatWantText checks the content of the first response part of the
// active turn.
func chatWantText(t *testing.T, s *protocol.ChatState, want string) {
	t.Helper()
	if got := s.ActiveTurn.ResponseParts[0].(*protocol.MarkdownResponsePart).Content.String(); got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
}

func chatTurnIDs(s *protocol.ChatState) string {
	ids := make([]string, len(s.Turns))
	for i, turn := range s.Turns {
		ids[i] = turn.ID
	}
	return strings.Join(ids, " ")
}

// TestChatStreamPartCounts streams into the last part of turns of every
// size a stream block holds inline and beyond, checking that the other
// parts are kept, that earlier states keep their text, and that a later
// responsePart never writes into the list of parts of an earlier state.
func TestChatStreamPartCounts(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 8, 9, 16, 17, 40} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			parts := make([]string, n)
			for i := range n - 1 {
				parts[i] = fmt.Sprintf(`{"kind":"markdown","id":"p%d","content":"x"}`, i)
			}
			parts[n-1] = chatReasoning
			s := chatState(t, chatActive(8, strings.Join(parts, ",")))
			s1 := chatApply(t, s,
				`{"type":"chat/reasoning","turnId":"t1","partId":"r","content":" more"}`,
				`{"type":"chat/delta","turnId":"t1","partId":"p0","content":"y"}`)
			s2 := chatApply(t, s1, `{"type":"chat/responsePart","turnId":"t1","part":{"kind":"markdown","id":"new","content":""}}`)
			got := s1.ActiveTurn.ResponseParts
			if len(got) != n || len(s2.ActiveTurn.ResponseParts) != n+1 {
				t.Fatalf("parts: %d then %d, want %d then %d", len(got), len(s2.ActiveTurn.ResponseParts), n, n+1)
			}
			// With n == 1 there is no p0: that delta changes nothing.
			if r := got[n-1].(*protocol.ReasoningResponsePart).Content.String(); r != "Hmm more" {
				t.Errorf("reasoning = %q, want \"Hmm more\"", r)
			}
			if n > 1 {
				if md := got[0].(*protocol.MarkdownResponsePart).Content.String(); md != "xy" {
					t.Errorf("first part = %q, want \"xy\"", md)
				}
				if n > 2 && got[1] != s.ActiveTurn.ResponseParts[1] {
					t.Errorf("an untouched part was copied")
				}
			}
			if r := s.ActiveTurn.ResponseParts[n-1].(*protocol.ReasoningResponsePart).Content.String(); r != "Hmm" {
				t.Errorf("the first state's reasoning became %q", r)
			}
			if cap(got) != len(got) {
				t.Errorf("list of parts has spare capacity %d: an append could write into the stream block", cap(got)-len(got))
			}
		})
	}
}

// TestChatCompletedTurnDetachesStreamedParts checks that a turn ending
// copies its streamed parts (keeping their text), so the history holds no
// part that lives in a streaming state's block.
func TestChatCompletedTurnDetachesStreamedParts(t *testing.T) {
	s := chatApply(t, chatState(t, chatActive(8, chatReasoning+","+chatMarkdown)),
		`{"type":"chat/reasoning","turnId":"t1","partId":"r","content":"!"}`,
		`{"type":"chat/delta","turnId":"t1","partId":"md","content":", world"}`)
	done := chatApply(t, s, `{"type":"chat/turnComplete","turnId":"t1","duration":5}`)
	parts := done.Turns[len(done.Turns)-1].ResponseParts
	for i, p := range parts {
		if p == s.ActiveTurn.ResponseParts[i] {
			t.Errorf("part %d of the completed turn is the streaming state's part", i)
		}
	}
	if got := parts[1].(*protocol.MarkdownResponsePart).Content.String(); got != "Hello, world" {
		t.Errorf("completed markdown = %q", got)
	}
	if got := parts[0].(*protocol.ReasoningResponsePart).Content.String(); got != "Hmm!" {
		t.Errorf("completed reasoning = %q", got)
	}
}

// TestChatSharesFields checks the layout streaming relies on: a streamed
// delta shares the chat's and the turn's other fields with the state it
// came from, while an action that changes one of those fields gives the
// new state fields of its own and leaves the old ones as they were.
func TestChatSharesFields(t *testing.T) {
	base := chatState(t, chatActive(8, chatMarkdown))
	streamed := chatClock.Chat(base, &protocol.ChatDeltaAction{TurnID: "t1", PartID: "md", Content: " world"})
	if streamed == base || streamed.ActiveTurn == base.ActiveTurn {
		t.Fatal("a delta returned the chat or the turn it was given")
	}
	if streamed.ChatStateFields != base.ChatStateFields || streamed.ActiveTurn.ActiveTurnFields != base.ActiveTurn.ActiveTurnFields {
		t.Error("a delta copied fields it does not change")
	}
	chatWantText(t, base, "Hello")
	chatWantText(t, streamed, "Hello world")

	for _, data := range []string{
		`{"type":"chat/activityChanged","activity":"Thinking"}`,
		`{"type":"chat/isReadChanged","isRead":true}`,
		`{"type":"chat/usage","turnId":"t1","usage":{"inputTokens":1,"outputTokens":2}}`,
	} {
		before := chatJSON(t, streamed)
		next := chatClock.Chat(streamed, chatAction(t, data))
		if next.ChatStateFields == streamed.ChatStateFields && next.ActiveTurn.ActiveTurnFields == streamed.ActiveTurn.ActiveTurnFields {
			t.Errorf("%s: the new state has no fields of its own", data)
		}
		if after := chatJSON(t, streamed); after != before {
			t.Errorf("%s modified the state it was given:\nbefore %s\nafter  %s", data, before, after)
		}
	}
}

// TestChatZeroState reduces and encodes chat states built without their
// fields structs, as a zero value: nothing panics, and the result has
// them.
func TestChatZeroState(t *testing.T) {
	s := chatClock.Chat(&protocol.ChatState{}, &protocol.ChatTurnStartedAction{TurnID: "t", Message: protocol.Message{Text: "hi"}})
	if s.ChatStateFields == nil || s.ActiveTurn == nil || s.ActiveTurn.ID != "t" {
		t.Fatalf("turn not started on a zero chat: %+v", s)
	}
	s = chatClock.Chat(&protocol.ChatState{ActiveTurn: &protocol.ActiveTurn{}}, &protocol.ChatDeltaAction{PartID: "p", Content: "x"})
	if s.ChatStateFields == nil || s.ActiveTurn.ActiveTurnFields == nil {
		t.Fatal("the result of reducing a zero chat lacks its fields")
	}
	for _, v := range []any{&protocol.ChatState{}, &protocol.ChatState{ActiveTurn: &protocol.ActiveTurn{}}, &protocol.ActiveTurn{}} {
		if _, err := protocol.Marshal(v); err != nil {
			t.Errorf("encoding %T with no fields: %v", v, err)
		}
	}
}
