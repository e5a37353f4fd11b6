package protocol

import (
	"bytes"
	"strings"
	"testing"
)

// fastAgainstGeneral decodes data with the fast path and with the general
// decoder, and fails when the fast path accepts what the general decoder
// refuses or reads it differently. It reports whether the fast path took
// the message.
func fastAgainstGeneral(t *testing.T, data []byte) bool {
	t.Helper()
	var fast ActionEnvelope
	fm, fd, ok := fastActionNotification(data, func(string) any { return &fast })
	general := new(ActionEnvelope)
	gm, gd, err := rpcDecodePooled(bytes.Clone(data), func(m string) any {
		if m == "action" {
			return general
		}
		return nil
	})
	if nm, nok := fastNotification(data); nok != ok {
		t.Errorf("%s: fastNotification took it: %v, fastActionNotification: %v", data, nok, ok)
	} else if ok && !bytes.Equal(nm.Notification.Params, fm.Notification.Params) {
		t.Errorf("%s: fastNotification params %s", data, nm.Notification.Params)
	}
	if err == nil && gm.Notification != nil {
		envelopeAgainstGeneral(t, gm.Notification.Params)
	}
	if !ok {
		if fd != nil || fm.Notification != nil || fast.Action != nil {
			t.Errorf("the fast path gave up on %s but left a result", data)
		}
		return false
	}
	if err != nil || gd != any(general) {
		t.Errorf("the fast path took %s, which the general decoder refuses: %v", data, err)
		return true
	}
	if fd != any(&fast) || fm.Notification == nil || gm.Notification == nil {
		t.Fatalf("fast path result %T, %+v", fd, fm)
	}
	if fm.Notification.Method != gm.Notification.Method || !bytes.Equal(fm.Notification.Params, gm.Notification.Params) {
		t.Errorf("%s: notification %q %s, general %q %s", data, fm.Notification.Method, fm.Notification.Params, gm.Notification.Method, gm.Notification.Params)
	}
	fb, err1 := Marshal(fast)
	gb, err2 := Marshal(*general)
	if err1 != nil || err2 != nil || string(fb) != string(gb) {
		t.Errorf("%s:\nfast    %s (%v)\ngeneral %s (%v)", data, fb, err1, gb, err2)
	}
	if fast.Action.Type() != general.Action.Type() {
		t.Errorf("%s: fast %T, general %T", data, fast.Action, general.Action)
	}
	return true
}

// TestFastPathTakesTheCommonShape lists messages the fast path takes (it
// must read them exactly as the general decoder does) and messages it
// leaves to the general decoder: anything with an escape, another member,
// another action, a member twice or a syntax error.
func TestFastPathTakesTheCommonShape(t *testing.T) {
	const delta = `{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-chat:/3f2b8a","action":{"type":"chat/delta","turnId":"turn-4","partId":"p-1","content":"Hello, w"},"serverSeq":1234567}}`
	taken := []string{
		delta,
		`{"method":"action","params":{"serverSeq":1,"action":{"type":"chat/delta","content":"","partId":"p","turnId":"t"},"channel":"c"},"jsonrpc":"2.0"}`,
		" {\n\t\"jsonrpc\" : \"2.0\" , \"method\":\"action\", \"params\" : { \"channel\" : \"c\" , \"action\" : { \"type\" : \"chat/reasoning\" , \"turnId\" : \"t\" , \"partId\" : \"r\" , \"content\" : \"ü € 😀\" } , \"serverSeq\" : 9 } } \r\n",
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-terminal:/t","action":{"type":"terminal/data","data":"ls -l"},"serverSeq":-3}}`,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"chat/delta","turnId":"t","partId":"p","content":"x"},"serverSeq":0}}`,
		`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"chat/delta","turnId":"t","partId":"p","content":"x"},"serverSeq":9223372036854775807}}`,
	}
	left := []string{
		// Escapes, control characters, invalid UTF-8.
		strings.Replace(delta, "Hello, w", `Hello,\nw`, 1),
		strings.Replace(delta, "Hello, w", `\u0048ello`, 1),
		strings.Replace(delta, "Hello, w", "Hello,\tw", 1),
		strings.Replace(delta, "Hello, w", "Hello\xff", 1),
		strings.Replace(delta, `"channel"`, `"chan\u006eel"`, 1),
		// A member twice, at each level.
		strings.Replace(delta, `"method":"action",`, `"method":"action","method":"action",`, 1),
		strings.Replace(delta, `"jsonrpc":"2.0",`, `"jsonrpc":"2.0","jsonrpc":"2.0",`, 1),
		strings.Replace(delta, `"channel":"ahp-chat:/3f2b8a",`, `"channel":"ahp-chat:/3f2b8a","channel":"ahp-chat:/other",`, 1),
		strings.Replace(delta, `"serverSeq":1234567`, `"serverSeq":1234567,"serverSeq":1`, 1),
		strings.Replace(delta, `"turnId":"turn-4",`, `"turnId":"turn-4","turnId":"turn-5",`, 1),
		strings.Replace(delta, `"content":"Hello, w"`, `"content":"Hello, w","content":"x"`, 1),
		strings.Replace(delta, `"type":"chat/delta",`, `"type":"chat/delta","type":"chat/delta",`, 1),
		strings.Replace(delta, `},"serverSeq"`, `},"action":{"type":"chat/delta","turnId":"t","partId":"p","content":"x"},"serverSeq"`, 1),
		strings.Replace(delta, `,"serverSeq":1234567}}`, `,"serverSeq":1234567},"params":{}}`, 1),
		// Other members, methods, actions and shapes.
		strings.Replace(delta, `"method":"action",`, `"id":1,"method":"action",`, 1),
		strings.Replace(delta, `"method":"action"`, `"method":"notification"`, 1),
		strings.Replace(delta, `"serverSeq":1234567`, `"serverSeq":1234567,"origin":{"clientId":"c","clientSeq":1}`, 1),
		strings.Replace(delta, `"content":"Hello, w"`, `"content":"Hello, w","_meta":{}`, 1),
		strings.Replace(delta, `"type":"chat/delta"`, `"type":"chat/usage"`, 1),
		strings.Replace(delta, `{"type":"chat/delta","turnId":"turn-4",`, `{"turnId":"turn-4","type":"chat/delta",`, 1),
		`{"params":{"channel":"c","action":{"type":"chat/delta","turnId":"t","partId":"p","content":"x"},"serverSeq":1},"jsonrpc":"2.0","method":"action"}`,
		strings.Replace(delta, `"jsonrpc":"2.0",`, ``, 1),
		strings.Replace(delta, `"jsonrpc":"2.0"`, `"jsonrpc":"1.0"`, 1),
		strings.Replace(delta, `"partId":"p-1",`, ``, 1),
		strings.Replace(delta, `"channel":"ahp-chat:/3f2b8a",`, ``, 1),
		strings.Replace(delta, `"turnId":"turn-4"`, `"turnId":null`, 1),
		// Numbers.
		strings.Replace(delta, `1234567`, `1234567.0`, 1),
		strings.Replace(delta, `1234567`, `1e3`, 1),
		strings.Replace(delta, `1234567`, `01`, 1),
		strings.Replace(delta, `1234567`, `9223372036854775808`, 1),
		strings.Replace(delta, `1234567`, `"7"`, 1),
		// Syntax.
		delta + "x",
		delta + "{}",
		delta[:len(delta)-1],
		strings.Replace(delta, `,"serverSeq"`, `"serverSeq"`, 1),
		strings.Replace(delta, `"channel":`, `"channel"`, 1),
		strings.Replace(delta, `"content":"Hello, w"}`, `"content":"Hello, w",}`, 1),
		`[` + delta + `]`,
		``,
	}
	for _, m := range taken {
		if !fastAgainstGeneral(t, []byte(m)) {
			t.Errorf("the fast path left %s to the general decoder", m)
		}
	}
	for _, m := range left {
		if m == delta {
			t.Fatalf("a case left the message as it was")
		}
		if fastAgainstGeneral(t, []byte(m)) {
			t.Errorf("the fast path took %s", m)
		}
	}
	for _, env := range []string{
		`{"channel":"c","action":{"type":"chat/delta","turnId":"t","partId":"p","content":"x"},"serverSeq":1}`,
		`{"channel":"c","channel":"d","action":{"type":"chat/delta","turnId":"t","partId":"p","content":"x"},"serverSeq":1}`,
		`{"channel":"c","action":{"type":"chat/delta","turnId":"t","partId":"p","content":"x","content":"y"},"serverSeq":1}`,
		`{"channel":"c","action":{"type":"chat/delta","turnId":"t","partId":"p","content":"x"},"serverSeq":1} x`,
	} {
		envelopeAgainstGeneral(t, []byte(env))
	}
	var env ActionEnvelope
	if !fastDecodeEnvelope([]byte(`{"channel":"c","action":{"type":"terminal/data","data":"x"},"serverSeq":1}`), &env) {
		t.Error("the fast path left a plain terminal/data envelope")
	}
	if fastDecodeEnvelope([]byte(`{"channel":"c","channel":"d","action":{"type":"terminal/data","data":"x"},"serverSeq":1}`), &env) {
		t.Error("the fast path took an envelope with its channel twice")
	}

	big := strings.Replace(delta, "Hello, w", strings.Repeat("x", maxFastMessage), 1)
	if fastAgainstGeneral(t, []byte(big)) {
		t.Errorf("the fast path took a message of %d bytes", len(big))
	}
}

// FuzzFastPath checks that the fast path never takes a message the general
// decoder refuses, and reads every message it takes the same way.
func FuzzFastPath(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-chat:/3f2b8a","action":{"type":"chat/delta","turnId":"turn-4","partId":"p-1","content":"Hello, w"},"serverSeq":1234567}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"t","action":{"type":"terminal/data","data":"x"},"serverSeq":2}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"chat/reasoning","turnId":"t","partId":"r","content":"é"},"serverSeq":3}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fastAgainstGeneral(t, data)
	})
}

// TestFastSpecial checks the eight-byte test against the byte table, for
// every byte in every position.
func TestFastSpecial(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			x := uint64(0)
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(b[i])
			}
			if got, want := fastSpecial(x), !fastPlain[c]; got != want {
				t.Fatalf("byte %#x at %d: special %v, want %v", c, pos, got, want)
			}
		}
	}
}

// envelopeAgainstGeneral checks fastDecodeEnvelope against the general
// decoder on the params of a message.
func envelopeAgainstGeneral(t *testing.T, params []byte) {
	t.Helper()
	var fast, general ActionEnvelope
	if !fastDecodeEnvelope(params, &fast) {
		if fast.Action != nil {
			t.Errorf("the fast path gave up on %s but left a result", params)
		}
		return
	}
	if err := unmarshalWith(params, general.decodeJSON); err != nil {
		t.Errorf("the fast path took the envelope %s, which the general decoder refuses: %v", params, err)
		return
	}
	fb, _ := Marshal(fast)
	gb, _ := Marshal(general)
	if string(fb) != string(gb) {
		t.Errorf("envelope %s:\nfast    %s\ngeneral %s", params, fb, gb)
	}
}

// TestFastInteger checks the fast path's integers against the general
// decoder at the edges of int64.
func TestFastInteger(t *testing.T) {
	for _, n := range []string{"0", "7", "-0", "-1", "123456789012345678", "999999999999999999", "1000000000000000000",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551616", "01", "1.0", "1e3", "-", ""} {
		data := []byte(`{"jsonrpc":"2.0","method":"action","params":{"channel":"c","action":{"type":"terminal/data","data":"x"},"serverSeq":` + n + `}}`)
		fastAgainstGeneral(t, data)
	}
}
