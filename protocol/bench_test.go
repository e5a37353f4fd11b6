package protocol_test

import (
	stdjson "encoding/json"
	"fmt"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// deltaNotification is a JSON-RPC "action" notification carrying one
// chat/delta, as a host sends thousands of times per streamed answer
// (180 bytes).
var deltaNotification = []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-chat:/3f2b8a","action":{"type":"chat/delta","turnId":"turn-4","partId":"p-1","content":"Hello, w"},"serverSeq":1234567}}`)

func TestDeltaNotificationSize(t *testing.T) {
	if len(deltaNotification) != 180 {
		t.Fatalf("benchmark input is %d bytes, want 180", len(deltaNotification))
	}
}

// actionParams tells DecodeMessageWith to decode "action" params in place.
func actionParams(method string) any {
	if method == "action" {
		return new(protocol.ActionEnvelope)
	}
	return nil
}

// decodeDelta decodes the notification into typed values (the message, the
// envelope and the action) in one pass, as the client does.
func decodeDelta(b *testing.B, data []byte) *protocol.ChatDeltaAction {
	_, decoded, err := protocol.DecodeMessageWith(data, actionParams)
	if err != nil {
		b.Fatal(err)
	}
	env, ok := decoded.(*protocol.ActionEnvelope)
	if !ok {
		b.Fatalf("params not decoded: %T", decoded)
	}
	d, ok := env.Action.(*protocol.ChatDeltaAction)
	if !ok {
		b.Fatalf("got %T", env.Action)
	}
	return d
}

// decodeDeltaTwoPass decodes the message, then its params.
func decodeDeltaTwoPass(b *testing.B, data []byte) *protocol.ChatDeltaAction {
	msg, err := protocol.DecodeMessage(data)
	if err != nil {
		b.Fatal(err)
	}
	var env protocol.ActionEnvelope
	if err := protocol.Unmarshal(msg.Notification.Params, &env); err != nil {
		b.Fatal(err)
	}
	d, ok := env.Action.(*protocol.ChatDeltaAction)
	if !ok {
		b.Fatalf("got %T", env.Action)
	}
	return d
}

// BenchmarkDecodeActionNotification compares typed decoding of the delta
// notification with encoding/json decoding the same bytes into
// map[string]any, in the same run.
func BenchmarkDecodeActionNotification(b *testing.B) {
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(deltaNotification)))
		for b.Loop() {
			decodeDelta(b, deltaNotification)
		}
	})
	b.Run("typed-two-pass", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(deltaNotification)))
		for b.Loop() {
			decodeDeltaTwoPass(b, deltaNotification)
		}
	})
	b.Run("encoding-json-map", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(deltaNotification)))
		for b.Loop() {
			var m map[string]any
			if err := stdjson.Unmarshal(deltaNotification, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func deltaEnvelope() protocol.ActionEnvelope {
	return protocol.ActionEnvelope{
		Channel:   "ahp-chat:/3f2b8a6d-4c2a-4f8e-9a51",
		ServerSeq: 1234567,
		Action:    &protocol.ChatDeltaAction{TurnID: "turn-42", PartID: "part-1", Content: "Hello, w"},
	}
}

func rootInitializeResult() protocol.InitializeResult {
	var agents []protocol.AgentInfo
	for i := range 4 {
		agents = append(agents, protocol.AgentInfo{
			Provider:    fmt.Sprintf("agent-%d", i),
			DisplayName: fmt.Sprintf("Agent %d", i),
			Description: "An agent that answers questions",
			Models: []protocol.SessionModelInfo{
				{ID: "model-a", Provider: fmt.Sprintf("agent-%d", i), Name: "Model A"},
				{ID: "model-b", Provider: fmt.Sprintf("agent-%d", i), Name: "Model B"},
			},
		})
	}
	return protocol.InitializeResult{
		ProtocolVersion: "0.8.0",
		ServerSeq:       42,
		ServerInfo:      &protocol.Implementation{Name: "ahpd", Version: protocol.Ptr("1.0.0")},
		Snapshots: []protocol.Snapshot{{
			Resource: "ahp-root://",
			FromSeq:  42,
			State:    &protocol.RootState{Agents: agents, ActiveSessions: protocol.Ptr[int64](3)},
		}},
	}
}

func chatState(turns int) *protocol.ChatState {
	s := &protocol.ChatState{ChatStateFields: &protocol.ChatStateFields{
		Resource:   "ahp-chat:/3f2b8a6d-4c2a-4f8e-9a51",
		Title:      "A long conversation",
		Status:     protocol.SessionStatusIdle,
		ModifiedAt: "2026-01-02T03:04:05.678Z",
		Turns:      []protocol.Turn{},
	}}
	for i := range turns {
		s.Turns = append(s.Turns, protocol.Turn{
			ID:      fmt.Sprintf("turn-%d", i),
			Message: protocol.Message{Text: "Please explain how the reducer keeps old states valid.", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}},
			ResponseParts: []protocol.ResponsePart{
				&protocol.ReasoningResponsePart{ID: "r", Content: protocol.TextOf("Thinking about structural sharing of parts.")},
				&protocol.MarkdownResponsePart{ID: "m", Content: protocol.TextOf("Each state shares what did not change with the one before it, so appending is cheap and old states stay valid.")},
			},
			State: protocol.TurnStateComplete,
		})
	}
	return s
}

// BenchmarkCodec measures decode and encode of three typical payloads.
func BenchmarkCodec(b *testing.B) {
	cases := []struct {
		name string
		v    any
		typ  string
	}{
		{"delta-envelope", deltaEnvelope(), "ActionEnvelope"},
		{"initialize-result", rootInitializeResult(), "InitializeResult"},
		{"chat-state-200-turns", chatState(200), "ChatState"},
	}
	for _, c := range cases {
		data, err := protocol.Marshal(c.v)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := protocol.Decode(c.typ, data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/encode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := protocol.Marshal(c.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeApply decodes the delta notification and applies its
// action to a chat that is streaming into that part, per action:
// "one-pass" is DecodeMessageWith, "client-path" what a client's
// connection does (DecodeMessage, then the envelope from the params).
func BenchmarkDecodeApply(b *testing.B) {
	streaming := func() *protocol.ChatState {
		return &protocol.ChatState{
			ChatStateFields: &protocol.ChatStateFields{Resource: "ahp-chat:/3f2b8a", Title: "Chat", ModifiedAt: "2026-01-02T03:04:05.678Z", Turns: []protocol.Turn{}},
			ActiveTurn: &protocol.ActiveTurn{ActiveTurnFields: &protocol.ActiveTurnFields{ID: "turn-4", StartedAt: "2026-01-02T03:04:05.678Z"},
				ResponseParts: []protocol.ResponsePart{&protocol.MarkdownResponsePart{ID: "p-1"}}},
		}
	}
	check := func(b *testing.B, s *protocol.ChatState) {
		b.StopTimer()
		if got := s.ActiveTurn.ResponseParts[0].(*protocol.MarkdownResponsePart).Content.Len(); got != 8*b.N {
			b.Fatalf("streamed %d bytes, want %d", got, 8*b.N)
		}
	}
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		s := streaming()
		for b.Loop() {
			s = reducer.Chat(s, decodeDelta(b, deltaNotification))
		}
		check(b, s)
	})
	b.Run("client-path", func(b *testing.B) {
		b.ReportAllocs()
		s := streaming()
		for b.Loop() {
			msg, err := protocol.DecodeMessage(deltaNotification)
			if err != nil {
				b.Fatal(err)
			}
			var env protocol.ActionEnvelope
			if err := protocol.Unmarshal(msg.Notification.Params, &env); err != nil {
				b.Fatal(err)
			}
			s = reducer.Chat(s, env.Action)
		}
		check(b, s)
	})
}
