package protocol_test

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/protocol"
)

// normalJSON compacts v and sorts object members, keeping numbers as written,
// so that two encodings compare by value and key presence.
func normalJSON(t *testing.T, v []byte) string {
	t.Helper()
	val := jsontext.Value(v).Clone()
	if err := val.Format(jsontext.ReorderRawObjects(true)); err != nil {
		t.Fatalf("invalid JSON %s: %v", v, err)
	}
	return string(val)
}

func kindOf(m protocol.JSONRPCMessage) string {
	switch {
	case m.Request != nil:
		return "request"
	case m.Notification != nil:
		return "notification"
	case m.Response != nil && m.Response.Error != nil:
		return "error"
	case m.Response != nil:
		return "success"
	}
	return "none"
}

func TestDecodeMessageRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		kind string
		out  string // defaults to in
	}{
		// The four JsonRpcMessage round-trip fixtures (008 to 011).
		{"fixture request", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "request", ""},
		{"fixture notification", `{"jsonrpc":"2.0","method":"action","params":{}}`, "notification", ""},
		{"fixture success", `{"jsonrpc":"2.0","id":1,"result":{}}`, "success", ""},
		{"fixture error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`, "error", ""},

		{"request without params", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "request", ""},
		{"request with array params", `{"jsonrpc":"2.0","id":2,"method":"m","params":[1,"a",null]}`, "request", ""},
		{"request with null params", `{"jsonrpc":"2.0","id":2,"method":"m","params":null}`, "request", ""},
		{"string id", `{"jsonrpc":"2.0","id":"7","method":"m"}`, "request", ""},
		{"empty string id", `{"jsonrpc":"2.0","id":"","method":"m"}`, "request", ""},
		{"negative id", `{"jsonrpc":"2.0","id":-5,"method":"m"}`, "request", ""},
		{"max int64 id", `{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}`, "request", ""},
		{"min int64 id", `{"jsonrpc":"2.0","id":-9223372036854775808,"result":1}`, "success", ""},
		{"notification without params", `{"jsonrpc":"2.0","method":"m"}`, "notification", ""},
		{"null result", `{"jsonrpc":"2.0","id":3,"result":null}`, "success", ""},
		{"scalar result", `{"jsonrpc":"2.0","id":3,"result":"done"}`, "success", ""},
		{"error with data", `{"jsonrpc":"2.0","id":"x","error":{"code":-32005,"message":"no","data":{"supportedVersions":["0.8.0"]}}}`, "error", ""},
		{"error with null data", `{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"","data":null}}`, "error", ""},
		{"error with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, "error", ""},
		{"member order and spacing", " {\"params\" : {\"b\":1,\"a\":[ ]}, \"method\":\"m\",\"id\":1,\"jsonrpc\":\"2.0\"}\n",
			"request", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"b":1,"a":[]}}`},
		{"unknown members dropped", `{"jsonrpc":"2.0","id":1,"method":"m","extra":{"x":[1]},"Method":"other"}`,
			"request", `{"jsonrpc":"2.0","id":1,"method":"m"}`},
		{"unknown error members dropped", `{"jsonrpc":"2.0","id":1,"error":{"code":2,"message":"m","more":true}}`,
			"error", `{"jsonrpc":"2.0","id":1,"error":{"code":2,"message":"m"}}`},
		{"escaped names", `{"jsonrpc":"2.0","\u0069d":1,"method":"a\"b"}`, "request", `{"jsonrpc":"2.0","id":1,"method":"a\"b"}`},
		{"big numbers in params kept", `{"jsonrpc":"2.0","method":"m","params":{"seq":18446744073709551615,"f":1.50}}`, "notification", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := protocol.DecodeMessage([]byte(tt.in))
			if err != nil {
				t.Fatalf("DecodeMessage: %v", err)
			}
			if got := kindOf(m); got != tt.kind {
				t.Errorf("kind = %s, want %s", got, tt.kind)
			}
			got, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			want := tt.out
			if want == "" {
				want = tt.in
			}
			if diff := cmp.Diff(normalJSON(t, []byte(want)), normalJSON(t, got)); diff != "" {
				t.Errorf("re-encoded (-want +got):\n%s", diff)
			}

			// The same through the json package, as the fixture harness does it.
			var viaJSON protocol.JSONRPCMessage
			if err := json.Unmarshal([]byte(tt.in), &viaJSON); err != nil {
				t.Fatalf("json.Unmarshal: %v", err)
			}
			got2, err := json.Marshal(&viaJSON)
			if err != nil {
				t.Fatalf("json.Marshal: %v", err)
			}
			if string(got2) != string(got) {
				t.Errorf("json.Marshal = %s, want %s", got2, got)
			}
		})
	}
}

func TestDecodeMessageErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		code protocol.ErrorCode
	}{
		{"empty", ``, protocol.CodeParseError},
		{"truncated", `{"jsonrpc":"2.0","id":1`, protocol.CodeParseError},
		{"not json", `hello`, protocol.CodeParseError},
		{"trailing data", `{"jsonrpc":"2.0","method":"m"} x`, protocol.CodeParseError},
		{"two messages", `{"jsonrpc":"2.0","method":"m"}{"jsonrpc":"2.0","method":"m"}`, protocol.CodeParseError},
		{"invalid utf8", "{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}", protocol.CodeParseError},
		{"shape error before syntax error", `{"jsonrpc":"1.0",`, protocol.CodeParseError},

		{"batch", `[{"jsonrpc":"2.0","method":"m"}]`, protocol.CodeInvalidRequest},
		{"scalar", `42`, protocol.CodeInvalidRequest},
		{"missing version", `{"id":1,"method":"m"}`, protocol.CodeInvalidRequest},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"m"}`, protocol.CodeInvalidRequest},
		{"numeric version", `{"jsonrpc":2.0,"id":1,"method":"m"}`, protocol.CodeInvalidRequest},
		{"duplicate member", `{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, protocol.CodeInvalidRequest},
		{"duplicate nested member", `{"jsonrpc":"2.0","method":"m","params":{"a":1,"a":2}}`, protocol.CodeInvalidRequest},
		{"method in wrong case", `{"jsonrpc":"2.0","id":1,"Method":"m"}`, protocol.CodeInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":3}`, protocol.CodeInvalidRequest},
		{"params scalar", `{"jsonrpc":"2.0","id":1,"method":"m","params":3}`, protocol.CodeInvalidRequest},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"m"}`, protocol.CodeInvalidRequest},
		{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"m"}`, protocol.CodeInvalidRequest},
		{"id too large", `{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}`, protocol.CodeInvalidRequest},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"m"}`, protocol.CodeInvalidRequest},
		{"null id request", `{"jsonrpc":"2.0","id":null,"method":"m"}`, protocol.CodeInvalidRequest},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"m","result":1}`, protocol.CodeInvalidRequest},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}`, protocol.CodeInvalidRequest},
		{"neither", `{"jsonrpc":"2.0","id":1}`, protocol.CodeInvalidRequest},
		{"response without id", `{"jsonrpc":"2.0","result":1}`, protocol.CodeInvalidRequest},
		{"success with null id", `{"jsonrpc":"2.0","id":null,"result":1}`, protocol.CodeInvalidRequest},
		{"response with params", `{"jsonrpc":"2.0","id":1,"result":1,"params":{}}`, protocol.CodeInvalidRequest},
		{"error not an object", `{"jsonrpc":"2.0","id":1,"error":"bad"}`, protocol.CodeInvalidRequest},
		{"error without message", `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, protocol.CodeInvalidRequest},
		{"error code fractional", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":""}}`, protocol.CodeInvalidRequest},
		{"error code string", `{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":""}}`, protocol.CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := protocol.DecodeMessage([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeMessage succeeded with %s, want code %d", kindOf(m), tt.code)
			}
			var e *protocol.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not a *protocol.Error", err, err)
			}
			if e.Code != tt.code {
				t.Errorf("code = %d (%v), want %d", e.Code, e, tt.code)
			}
			if kindOf(m) != "none" {
				t.Errorf("failed decode returned a %s", kindOf(m))
			}
		})
	}
}

func TestDecodeMessageParamsDoNotClobberInput(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","method":"m","params":{"a":1},"x":0}`)
	orig := string(data)
	m, err := protocol.DecodeMessage(data)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(m.Notification.Params, "garbage"...)
	if string(data) != orig {
		t.Errorf("appending to params changed the input: %s", data)
	}
}

func TestID(t *testing.T) {
	for _, n := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1 << 53, 1<<53 + 1} {
		id := protocol.Int64ID(n)
		b, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		if want := strconv.FormatInt(n, 10); string(b) != want {
			t.Errorf("Marshal(Int64ID(%d)) = %s, want %s", n, b, want)
		}
		var back protocol.ID
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back != id {
			t.Errorf("ID %d did not survive: got %v", n, back)
		}
		if back.Raw() != any(n) {
			t.Errorf("Raw() = %#v, want int64 %d", back.Raw(), n)
		}
	}

	if protocol.Int64ID(1) == protocol.StringID("1") {
		t.Error(`ID 1 equals ID "1"`)
	}
	seen := map[protocol.ID]bool{protocol.Int64ID(1): true}
	if seen[protocol.StringID("1")] || !seen[protocol.Int64ID(1)] {
		t.Error("IDs as map keys confuse numbers and strings")
	}

	var zero protocol.ID
	if zero.IsValid() || zero.String() != "null" || zero.Raw() != nil {
		t.Errorf("zero ID: IsValid %v, String %s, Raw %v", zero.IsValid(), zero, zero.Raw())
	}
	if got := protocol.StringID(`a"b`).String(); got != `"a\"b"` {
		t.Errorf("String() = %s", got)
	}

	for _, bad := range []string{`1.5`, `1e3`, `9223372036854775808`, `true`, `{}`, `[1]`, `01`} {
		var id protocol.ID
		if err := id.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("UnmarshalJSON(%s) = %v, want error", bad, id)
		}
	}
}

func TestErrorIs(t *testing.T) {
	notFound := &protocol.Error{Code: protocol.CodeMethodNotFound, Message: "no such method: x"}
	wrapped := fmt.Errorf("calling x: %w", notFound)

	if !errors.Is(wrapped, &protocol.Error{Code: protocol.CodeMethodNotFound}) {
		t.Error("errors.Is does not match on code")
	}
	if errors.Is(wrapped, &protocol.Error{Code: protocol.CodeInvalidParams}) {
		t.Error("errors.Is matches a different code")
	}
	if errors.Is(wrapped, (*protocol.Error)(nil)) {
		t.Error("errors.Is matches a nil *Error")
	}
	var e *protocol.Error
	if !errors.As(wrapped, &e) || e != notFound {
		t.Error("errors.As does not find the *Error")
	}
	if got := notFound.Error(); got != "no such method: x" {
		t.Errorf("Error() = %q", got)
	}
	if got := (&protocol.Error{Code: 7}).Error(); got != "jsonrpc error 7" {
		t.Errorf("Error() without message = %q", got)
	}
}

func TestMarshalEnvelope(t *testing.T) {
	tests := []struct {
		name    string
		v       any
		want    string // empty when an error is expected
		wantErr bool
	}{
		{"request", protocol.Request{ID: protocol.StringID("a"), Method: "m", Params: jsontext.Value(`{}`)},
			`{"jsonrpc":"2.0","id":"a","method":"m","params":{}}`, false},
		{"request without id", protocol.Request{Method: "m"}, "", true},
		{"notification", protocol.Notification{Method: "m"}, `{"jsonrpc":"2.0","method":"m"}`, false},
		{"success with nil result", protocol.Response{ID: protocol.Int64ID(1)}, `{"jsonrpc":"2.0","id":1,"result":null}`, false},
		{"success without id", protocol.Response{Result: jsontext.Value(`1`)}, "", true},
		{"error with null id", protocol.Response{Error: &protocol.Error{Code: -32700, Message: "bad"}},
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`, false},
		{"error ignores result", protocol.Response{ID: protocol.Int64ID(1), Result: jsontext.Value(`1`), Error: &protocol.Error{Code: 1, Message: "m", Data: jsontext.Value(`[1]`)}},
			`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[1]}}`, false},
		{"error with invalid data", protocol.Response{ID: protocol.Int64ID(1), Error: &protocol.Error{Code: 1, Data: jsontext.Value(`{`)}}, "", true},
		{"empty message union", protocol.JSONRPCMessage{}, "", true},
		{"crowded message union", protocol.JSONRPCMessage{Request: &protocol.Request{ID: protocol.Int64ID(1)}, Notification: &protocol.Notification{}}, "", true},
		{"error object alone", &protocol.Error{Code: 3, Message: "m"}, `{"code":3,"message":"m"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.v)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Marshal = %s, want error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal = %s\nwant      %s", got, tt.want)
			}
		})
	}
}

func TestUnmarshalSingleKinds(t *testing.T) {
	var req protocol.Request
	if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":"q","method":"m","params":[]}`), &req); err != nil {
		t.Fatal(err)
	}
	want := protocol.Request{ID: protocol.StringID("q"), Method: "m", Params: jsontext.Value(`[]`)}
	if req.ID != want.ID || req.Method != want.Method || string(req.Params) != string(want.Params) {
		t.Errorf("Request = %+v, want %+v", req, want)
	}
	if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","method":"m"}`), &req); err == nil {
		t.Error("a notification decoded into a Request")
	}
	var n protocol.Notification
	if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"result":null}`), &n); err == nil {
		t.Error("a response decoded into a Notification")
	}
	var resp protocol.Response
	if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":5,"message":"m"}}`), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error == nil || resp.Error.Code != 5 {
		t.Errorf("Response = %+v", resp)
	}
}

// FuzzDecodeMessage checks that decoding never panics and that whatever
// decodes encodes to a message that decodes to the same thing.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"action","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"x","data":[1]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":""}}`,
		`[1]`, `{"jsonrpc":"2.0","id":1e400}`, `{"a":{"a":{"a":[]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := protocol.DecodeMessage(data)
		if err != nil {
			var e *protocol.Error
			if !errors.As(err, &e) || (e.Code != protocol.CodeParseError && e.Code != protocol.CodeInvalidRequest) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("re-encoding %s: %v", data, err)
		}
		m2, err := protocol.DecodeMessage(enc)
		if err != nil {
			t.Fatalf("decoding re-encoded %s: %v", enc, err)
		}
		enc2, err := json.Marshal(m2)
		if err != nil {
			t.Fatal(err)
		}
		if string(enc) != string(enc2) {
			t.Fatalf("unstable encoding:\n%s\n%s", enc, enc2)
		}
	})
}

func BenchmarkDecodeMessage(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":42,"method":"dispatchAction","params":{"channel":"ahp-session:/0b4f","clientSeq":17,` +
		`"action":{"type":"chat/delta","turnId":"t1","partId":"p1","content":"Hello there, this is a streamed chunk of text."}}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := protocol.DecodeMessage(data); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDecodeMessageWith(t *testing.T) {
	params := func(method string) any {
		if method == "action" {
			return new(protocol.ActionEnvelope)
		}
		return nil
	}
	for _, tc := range []struct {
		name, in  string
		decoded   bool
		rawParams string
	}{
		{"method first", `{"jsonrpc":"2.0","method":"action","params" : {"channel":"c","serverSeq":3,"action":{"type":"session/titleChanged","title":"x"}}}`, true,
			`{"channel":"c","serverSeq":3,"action":{"type":"session/titleChanged","title":"x"}}`},
		{"params first", `{"params":{"channel":"c","serverSeq":3,"action":{"type":"session/titleChanged","title":"x"}},"jsonrpc":"2.0","method":"action"}`, false,
			`{"channel":"c","serverSeq":3,"action":{"type":"session/titleChanged","title":"x"}}`},
		{"other method", `{"jsonrpc":"2.0","method":"root/sessionRemoved","params":{"channel":"ahp-root://","session":"s"}}`, false,
			`{"channel":"ahp-root://","session":"s"}`},
		{"bad params fall back", `{"jsonrpc":"2.0","method":"action","params":{"channel":5}}`, false, `{"channel":5}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, decoded, err := protocol.DecodeMessageWith([]byte(tc.in), params)
			if err != nil {
				t.Fatal(err)
			}
			if (decoded != nil) != tc.decoded {
				t.Fatalf("decoded = %v, want decoded %v", decoded, tc.decoded)
			}
			if string(m.Notification.Params) != tc.rawParams {
				t.Fatalf("raw params %s", m.Notification.Params)
			}
			if tc.decoded && decoded.(*protocol.ActionEnvelope).ServerSeq != 3 {
				t.Fatalf("envelope %+v", decoded)
			}
		})
	}
	if _, _, err := protocol.DecodeMessageWith([]byte(`{"jsonrpc":"2.0","method":"action","params":{}} x`), params); err == nil {
		t.Fatal("trailing data accepted")
	}
}

// TestDuplicateMembersByDirection records what a member name given twice
// gets, in each direction.
//
// From clients, ahpd must refuse the ambiguity: a client could otherwise
// send an action that one reader takes one way and another reader the
// other. The general decoder refuses duplicate names in any object.
//
// From the host, trusting the names would be reasonable (the host is the
// authority), but it would save nothing where it matters: the streamed
// actions, most of what a host sends, take the fast path, whose check is a
// bit set over the few members it knows. So duplicates are refused in both
// directions, and the check costs nothing measurable on the hot path.
func TestDuplicateMembersByDirection(t *testing.T) {
	envelope := func(string) any { return new(protocol.ActionEnvelope) }
	const line = `{"jsonrpc":"2.0","method":"action","params":{"channel":"ahp-chat:/c","action":{"type":"chat/delta","turnId":"t","partId":"p","content":"a"%s},"serverSeq":1}}`
	// From the host: the plain line decodes, the ambiguous one is refused.
	if _, d, err := protocol.DecodeMessageWith([]byte(fmt.Sprintf(line, "")), envelope); err != nil || d == nil {
		t.Fatalf("plain line: %v, %T", err, d)
	}
	for _, data := range []string{
		fmt.Sprintf(line, `,"content":"b"`),
		strings.Replace(fmt.Sprintf(line, ""), `"serverSeq":1`, `"serverSeq":1,"serverSeq":2`, 1),
	} {
		_, d, err := protocol.DecodeMessageWith([]byte(data), envelope)
		var e *protocol.Error
		if !errors.As(err, &e) || e.Code != protocol.CodeInvalidRequest || d != nil {
			t.Errorf("from the host, %s: %v, %T; want an invalid-request error", data, err, d)
		}
		if _, err := protocol.DecodeMessage([]byte(data)); err == nil {
			t.Errorf("DecodeMessage took %s", data)
		}
	}
	// From a client: the message and its params are refused.
	const dispatch = `{"jsonrpc":"2.0","method":"dispatchAction","params":{"channel":"ahp-session:/s","clientSeq":1,"action":{"type":"session/titleChanged","title":"a","title":"b"}}}`
	if _, err := protocol.DecodeMessage([]byte(dispatch)); err == nil {
		t.Errorf("from a client: DecodeMessage took %s", dispatch)
	}
	var p protocol.DispatchActionParams
	if err := protocol.UnmarshalStrict([]byte(`{"channel":"ahp-session:/s","clientSeq":1,"action":{"type":"session/titleChanged","title":"a","title":"b"}}`), &p); err == nil {
		t.Error("from a client: the params with a title twice decoded")
	}
}
