package acp

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// BenchmarkChatToolsServer measures what a chat's clients' tools server
// costs: starting it and listing 20 tools of a client.
func BenchmarkChatToolsServer(b *testing.B) {
	be, err := New(Config{Name: "bench", Command: "true"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	tools := make([]protocol.ToolDefinition, 20)
	for i := range tools {
		tools[i] = protocol.ToolDefinition{Name: fmt.Sprintf("tool_%d", i), Description: protocol.Ptr("A tool"),
			InputSchema: &protocol.ToolDefinitionInputSchema{Required: []string{"path"}}}
	}
	s := &session{b: be, log: be.log, clients: []protocol.SessionActiveClient{{ClientID: "c", Tools: tools}}, host: nil}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ct, err := newChatTools(s, fmt.Sprintf("chat-%d", i))
		if err != nil {
			b.Fatal(err)
		}
		ct.sync()
		ct.close()
	}
}

// TestMCPToolSchema: a client's input schema is listed as an object
// schema, whatever it says of its type; a tool without one gets the empty
// object schema.
func TestMCPToolSchema(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *protocol.ToolDefinitionInputSchema
		want string
	}{
		{"none", nil, `{"type":"object"}`},
		{"properties", &protocol.ToolDefinitionInputSchema{Required: []string{"a"}}, `{"required":["a"],"type":"object"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mcpTool(protocol.ToolDefinition{Name: "x", InputSchema: tc.in})
			b, err := json.Marshal(got.InputSchema)
			if err != nil || string(b) != tc.want {
				t.Fatalf("schema %s, %v; want %s", b, err, tc.want)
			}
		})
	}
}
