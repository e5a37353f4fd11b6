package protocol_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/ahp-go/ahp/internal/fixture"
	"github.com/ahp-go/ahp/internal/specdir"
	"github.com/ahp-go/ahp/protocol"
)

// fixtureSeeds returns fuzz seeds taken from the conformance fixtures: every
// round-trip input, and every reducer fixture action wrapped in an action
// envelope and in an "action" notification. Without the spec folder it
// returns nothing (the fuzz targets still run on their own seeds).
func fixtureSeeds() (envelopes, messages [][]byte) {
	dir, err := specdir.Dir()
	if err != nil {
		return nil, nil
	}
	var rts []fixture.RoundTrip
	var reds []fixture.Reducer
	for _, sub := range []string{"round-trips", "reducers"} {
		entries, _ := os.ReadDir(dir + "/test-cases/" + sub)
		for _, e := range entries {
			data, err := os.ReadFile(dir + "/test-cases/" + sub + "/" + e.Name())
			if err != nil || !bytes.HasSuffix([]byte(e.Name()), []byte(".json")) {
				continue
			}
			if sub == "round-trips" {
				var rt fixture.RoundTrip
				if json.Unmarshal(data, &rt) == nil {
					rts = append(rts, rt)
				}
			} else {
				var r fixture.Reducer
				if json.Unmarshal(data, &r) == nil {
					reds = append(reds, r)
				}
			}
		}
	}
	wrap := func(action []byte) {
		env := []byte(`{"channel":"ahp-chat:/c","serverSeq":7,"action":` + string(action) + `}`)
		envelopes = append(envelopes, env)
		messages = append(messages, []byte(`{"jsonrpc":"2.0","method":"action","params":`+string(env)+`}`))
	}
	for _, rt := range rts {
		switch rt.Type {
		case "ActionEnvelope":
			envelopes = append(envelopes, rt.Input)
			messages = append(messages, []byte(`{"jsonrpc":"2.0","method":"action","params":`+string(rt.Input)+`}`))
		case "StateAction":
			wrap(rt.Input)
		case "JsonRpcMessage":
			messages = append(messages, rt.Input)
		}
	}
	for _, r := range reds {
		for _, a := range r.Actions {
			wrap(a)
		}
	}
	return envelopes, messages
}

// FuzzActionEnvelope checks that decoding an action envelope never panics,
// and that whatever decodes is stable: decode, encode, decode, encode gives
// the same bytes twice.
func FuzzActionEnvelope(f *testing.F) {
	envelopes, _ := fixtureSeeds()
	for _, s := range envelopes {
		f.Add(s)
	}
	f.Add([]byte(`{"channel":"ahp-root://","serverSeq":1,"action":{"kind":"x","type":"future/thing","nested":{"a":[1,2,{"b":null}]}}}`))
	f.Add([]byte(`{"action":{"content":"x","type":"chat/delta","turnId":"t","partId":"p"},"channel":"c","serverSeq":9007199254740993}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var env protocol.ActionEnvelope
		if err := protocol.Unmarshal(data, &env); err != nil {
			return
		}
		enc, err := protocol.Marshal(env)
		if err != nil {
			t.Fatalf("re-encoding %s: %v", data, err)
		}
		var env2 protocol.ActionEnvelope
		if err := protocol.Unmarshal(enc, &env2); err != nil {
			t.Fatalf("decoding re-encoded %s: %v", enc, err)
		}
		enc2, err := protocol.Marshal(env2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("unstable encoding:\n%s\n%s", enc, enc2)
		}
	})
}

// FuzzActionNotification decodes a whole "action" notification the way a
// client does (message, then envelope) and checks the same properties.
func FuzzActionNotification(f *testing.F) {
	_, messages := fixtureSeeds()
	for _, s := range messages {
		f.Add(s)
	}
	f.Add(deltaNotification)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := protocol.DecodeMessage(data)
		if err != nil || m.Notification == nil || m.Notification.Method != "action" {
			return
		}
		var env protocol.ActionEnvelope
		if err := protocol.Unmarshal(m.Notification.Params, &env); err != nil {
			return
		}
		enc, err := protocol.Marshal(env)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		var env2 protocol.ActionEnvelope
		if err := protocol.Unmarshal(enc, &env2); err != nil {
			t.Fatalf("decoding re-encoded %s: %v", enc, err)
		}
		if enc2, _ := protocol.Marshal(env2); !bytes.Equal(enc, enc2) {
			t.Fatalf("unstable encoding:\n%s\n%s", enc, enc2)
		}
	})
}
