package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
)

// Command params are checked against their schema types too: a value
// outside an enumeration or a null where the type has none is -32602
// naming the member, and nothing is written.
func TestResourceParamsTypesChecked(t *testing.T) {
	dir := t.TempDir()
	srv := startHost(t, nil, nil)
	c := srv.Dial(t, "c1")
	initialize(t, c)
	createSession(t, c, "s1", dir)
	uri := files.URIOf(filepath.Join(dir, "a.txt"))
	for _, tc := range []struct {
		name, method, params, want string
	}{
		{"enumeration", "resourceWrite", `{"uri":"` + uri + `","data":"x","encoding":"utf-8","mode":"sideways"}`, `member mode is "sideways"`},
		{"null required", "resourceWrite", `{"uri":"` + uri + `","data":null,"encoding":"utf-8"}`, "member data is null"},
		{"wrong kind", "resourceWrite", `{"uri":"` + uri + `","data":5,"encoding":"utf-8"}`, "member data: want a JSON string"},
		{"null in an array", "createResourceWatch", `{"uri":"` + files.URIOf(dir) + `","excludes":{"items":[null]}}`, "member excludes.items[0] is null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := rpcCode(t, c.Call(tc.method, jsontext.Value(tc.params), nil))
			if e.Code != protocol.CodeInvalidParams || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("got %v, want -32602 with %q", e, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil {
				t.Fatal("a.txt was written")
			}
		})
	}
	// A null optional member reads as absent.
	must(t, c.Call("resourceWrite", jsontext.Value(`{"uri":"`+uri+`","data":"x","encoding":"utf-8","mode":null}`), nil))
}
