package client

import (
	"reflect"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// TestChannelOf checks the routing of notification params to channels.
func TestChannelOf(t *testing.T) {
	for _, tc := range []struct {
		params any
		want   string
	}{
		{&protocol.SessionAddedParams{Channel: protocol.RootURI}, protocol.RootURI},
		{&protocol.ActionEnvelope{Channel: "ahp-chat:/c"}, "ahp-chat:/c"},
		{&protocol.PingParams{}, ""},
		{nil, ""},
		{"not params", ""},
	} {
		if got := channelOf(tc.params); got != tc.want {
			t.Errorf("channelOf(%T) = %q, want %q", tc.params, got, tc.want)
		}
	}
}

// BenchmarkChannelOf compares the generated ChannelURI with the
// reflection it replaced.
func BenchmarkChannelOf(b *testing.B) {
	var params any = &protocol.SessionSummaryChangedParams{Channel: protocol.RootURI}
	b.Run("ChannelURI", func(b *testing.B) {
		for b.Loop() {
			if channelOf(params) == "" {
				b.Fatal("no channel")
			}
		}
	})
	b.Run("reflection", func(b *testing.B) {
		for b.Loop() {
			v := reflect.ValueOf(params).Elem()
			if v.FieldByName("Channel").String() == "" {
				b.Fatal("no channel")
			}
		}
	})
}
