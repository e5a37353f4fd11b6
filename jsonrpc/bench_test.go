package jsonrpc_test

import (
	"testing"
)

type benchParams struct {
	Channel string `json:"channel"`
	Seq     int64  `json:"seq"`
	Text    string `json:"text"`
}

// BenchmarkCall measures a call and its response, end to end, over each
// transport, and over the WebSockets a host accepts and a client dials.
func BenchmarkCall(b *testing.B) {
	params := benchParams{Channel: "ahp-session:/0b4f3c", Seq: 42, Text: "a short chunk of streamed text"}
	for _, tk := range append(transports, transportKind{"websocket-http", httpTransports}) {
		b.Run(tk.name, func(b *testing.B) {
			a, _ := tk.pair(b, nil, echo, nil)
			ctx := b.Context()
			var got benchParams
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Call(ctx, "echo", params, &got); err != nil {
					b.Fatal(err)
				}
			}
			if got != params {
				b.Fatalf("echo returned %+v", got)
			}
		})
	}
}
