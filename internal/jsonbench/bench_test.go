package jsonbench

import (
	stdjson "encoding/json"
	"errors"
	"testing"

	sonic "github.com/bytedance/sonic"
	v2 "github.com/go-json-experiment/json"
	goccy "github.com/goccy/go-json"
	jsoniter "github.com/json-iterator/go"
	segment "github.com/segmentio/encoding/json"

	"github.com/ahp-go/ahp/protocol"
)

// notification is the 180-byte message every benchmark decodes.
var notification = []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-chat:/3f2b8a","action":{"type":"chat/delta","turnId":"turn-4","partId":"p-1","content":"Hello, w"},"serverSeq":1234567}}`)

// The types below are what a reflection-based library decodes into: the
// same shapes as the generated wire types, with the action union decoded
// the only way those libraries allow, by reading the raw action, probing
// its "type" and decoding it a second time into the variant.

type message struct {
	JSONRPC string   `json:"jsonrpc"`
	Method  string   `json:"method"`
	Params  envelope `json:"params"`
}

type envelope struct {
	Channel   string             `json:"channel"`
	Action    stdjson.RawMessage `json:"action"`
	ServerSeq int64              `json:"serverSeq"`
}

type delta struct {
	Type    string `json:"type"`
	TurnID  string `json:"turnId"`
	PartID  string `json:"partId"`
	Content string `json:"content"`
}

type probe struct {
	Type string `json:"type"`
}

// decodeWith decodes the notification with one library's Unmarshal.
func decodeWith(unmarshal func([]byte, any) error) (*delta, error) {
	var m message
	if err := unmarshal(notification, &m); err != nil {
		return nil, err
	}
	var p probe
	if err := unmarshal(m.Params.Action, &p); err != nil {
		return nil, err
	}
	if p.Type != "chat/delta" {
		return nil, errors.New("not a delta")
	}
	var d delta
	if err := unmarshal(m.Params.Action, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// decodeGenerated decodes the way the client does: message, envelope and
// action in one pass.
func decodeGenerated() (*protocol.ChatDeltaAction, error) {
	_, decoded, err := protocol.DecodeMessageWith(notification, func(method string) any {
		if method == "action" {
			return new(protocol.ActionEnvelope)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	env, ok := decoded.(*protocol.ActionEnvelope)
	if !ok {
		return nil, errors.New("params not decoded")
	}
	d, ok := env.Action.(*protocol.ChatDeltaAction)
	if !ok {
		return nil, errors.New("not a delta")
	}
	return d, nil
}

func v2Unmarshal(b []byte, v any) error { return v2.Unmarshal(b, v) }

var libraries = []struct {
	name      string
	unmarshal func([]byte, any) error
}{
	{"encoding-json", stdjson.Unmarshal},
	{"go-json-experiment", v2Unmarshal},
	{"goccy-go-json", goccy.Unmarshal},
	{"sonic", sonic.Unmarshal},
	{"segmentio", segment.Unmarshal},
	{"jsoniter", jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal},
}

func TestAllDecodeTheSame(t *testing.T) {
	want, err := decodeGenerated()
	if err != nil {
		t.Fatal(err)
	}
	for _, lib := range libraries {
		got, err := decodeWith(lib.unmarshal)
		if err != nil {
			t.Fatalf("%s: %v", lib.name, err)
		}
		if got.TurnID != want.TurnID || got.PartID != want.PartID || got.Content != want.Content {
			t.Fatalf("%s decoded %+v", lib.name, got)
		}
	}
}

// BenchmarkDecodeDelta decodes the notification into typed values with the
// generated codec and with each library, and with encoding/json into a
// map[string]any as the reference point.
func BenchmarkDecodeDelta(b *testing.B) {
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeGenerated(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json-map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := stdjson.Unmarshal(notification, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, lib := range libraries {
		b.Run(lib.name+"-typed", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeWith(lib.unmarshal); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
