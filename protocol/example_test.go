package protocol_test

import (
	"fmt"

	"github.com/ahp-go/ahp/protocol"
)

// Decoding an action notification: the envelope names its channel, and
// its action is one variant of the StateAction union.
func Example() {
	data := []byte(`{"channel":"ahp-session:/demo","serverSeq":7,
		"action":{"type":"session/titleChanged","title":"Refactor the parser"},
		"origin":{"clientId":"c1","clientSeq":3}}`)
	var env protocol.ActionEnvelope
	if err := protocol.Unmarshal(data, &env); err != nil {
		panic(err)
	}
	var msg protocol.ChannelMessage = &env
	fmt.Println(msg.ChannelURI(), env.ServerSeq, env.Action.Type())
	if a, ok := env.Action.(*protocol.SessionTitleChangedAction); ok {
		fmt.Println(a.Title)
	}
	out, _ := protocol.Marshal(env.Action)
	fmt.Println(string(out))
	// Output:
	// ahp-session:/demo 7 session/titleChanged
	// Refactor the parser
	// {"type":"session/titleChanged","title":"Refactor the parser"}
}

// UnmarshalStrict reports the required members a message lacks, by path;
// Unmarshal accepts it as far as it goes.
func ExampleUnmarshalStrict() {
	data := []byte(`{"channel":"ahp-chat:/c1","clientSeq":1,"action":{"type":"chat/turnStarted","turnId":"t1"}}`)
	var p protocol.DispatchActionParams
	fmt.Println(protocol.Unmarshal(data, &p) == nil, p.Action.Type())
	fmt.Println(protocol.UnmarshalStrict(data, &p))
	// Output:
	// true chat/turnStarted
	// protocol: missing required members "action.startedAt", "action.message"
}
