package protocol_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/internal/gen/gendata/datagen"
	"github.com/ahp-go/ahp/internal/gen/wiregen"
	"github.com/ahp-go/ahp/internal/specdir"
	"github.com/ahp-go/ahp/protocol"
)

// readSpecJSON decodes a file of the spec folder into v.
func readSpecJSON(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(specdir.V1.ForTest(t), filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// schemaNames returns every definition name of the spec's JSON Schemas.
func schemaNames(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(specdir.V1.ForTest(t, "schema"), "*.schema.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema files (%v)", err)
	}
	names := map[string]bool{}
	for _, f := range files {
		var doc struct {
			Defs map[string]jsontext.Value `json:"$defs"`
		}
		readSpecJSON(t, filepath.Join("schema", filepath.Base(f)), &doc)
		for n := range doc.Defs {
			names[n] = true
		}
	}
	return names
}

// TestMethodTable checks the method table against data/methods.json.
func TestMethodTable(t *testing.T) {
	var doc struct {
		Methods []struct {
			Method         string   `json:"method"`
			Maps           []string `json:"maps"`
			Kind           string   `json:"kind"`
			Params         string   `json:"params"`
			Result         string   `json:"result"`
			ParamsChannel  string   `json:"paramsChannel"`
			ClientToServer bool     `json:"clientToServer"`
			ServerToClient bool     `json:"serverToClient"`
		} `json:"methods"`
	}
	readSpecJSON(t, "data/methods.json", &doc)
	schema := schemaNames(t)

	methods := protocol.Methods()
	// 1.1.0: 32 client commands, 3 host requests, 7 client and 16 host
	// notifications, some in two maps.
	if len(doc.Methods) != 50 || len(methods) != len(doc.Methods) {
		t.Fatalf("methods.json lists %d methods, the table %d; want 50", len(doc.Methods), len(methods))
	}
	counts := map[string]int{}
	for i, want := range doc.Methods {
		for _, name := range want.Maps {
			counts[name]++
		}
		m, ok := protocol.LookupMethod(want.Method)
		if !ok {
			t.Errorf("LookupMethod(%q) found nothing", want.Method)
			continue
		}
		if methods[i].Name != want.Method {
			t.Errorf("Methods()[%d] = %q, want %q (spec order)", i, methods[i].Name, want.Method)
		}
		wantResult := want.Result
		if wantResult == "null" {
			wantResult = ""
		}
		got := [...]any{m.FromClient, m.FromServer, m.Notification, m.RootChannel, m.Params, m.Result}
		exp := [...]any{want.ClientToServer, want.ServerToClient, want.Kind == "notification",
			want.ParamsChannel == "'ahp-root://'", want.Params, wantResult}
		if got != exp {
			t.Errorf("%s: table has %v, methods.json says %v", want.Method, got, exp)
		}
		checkConstructor(t, want.Method+" params", m.Params, m.NewParams, schema)
		checkConstructor(t, want.Method+" result", m.Result, m.NewResult, schema)
	}
	// 32 client requests (10 of which the server may send too), 7 client
	// notifications, 16 server notifications (5 notifications go both ways).
	wantCounts := map[string]int{"CommandMap": 32, "ServerCommandMap": 10, "ClientNotificationMap": 7, "ServerNotificationMap": 16}
	if !reflect.DeepEqual(counts, wantCounts) {
		t.Errorf("methods.json map counts = %v, want %v", counts, wantCounts)
	}
	tableCounts := map[string]int{}
	for _, m := range methods {
		if m.Notification && m.FromClient {
			tableCounts["ClientNotificationMap"]++
		}
		if m.Notification && m.FromServer {
			tableCounts["ServerNotificationMap"]++
		}
		if !m.Notification && m.FromClient {
			tableCounts["CommandMap"]++
		}
		if !m.Notification && m.FromServer {
			tableCounts["ServerCommandMap"]++
		}
	}
	if !reflect.DeepEqual(tableCounts, wantCounts) {
		t.Errorf("table counts = %v, want %v", tableCounts, wantCounts)
	}
	if _, ok := protocol.LookupMethod("nosuchMethod"); ok {
		t.Error("LookupMethod found an unknown method")
	}
}

// checkConstructor checks that newValue allocates the Go type named like
// the schema type. Only a name the schemas do not define may fall back to
// raw JSON.
func checkConstructor(t *testing.T, what, typeName string, newValue func() any, schema map[string]bool) {
	t.Helper()
	if typeName == "" {
		if newValue != nil {
			t.Errorf("%s: constructor set without a type", what)
		}
		return
	}
	if newValue == nil {
		t.Errorf("%s: no constructor for %s", what, typeName)
		return
	}
	typ := reflect.TypeOf(newValue())
	if typ.Kind() != reflect.Pointer {
		t.Errorf("%s: constructor returns %v, want a pointer", what, typ)
		return
	}
	if typ.Elem().Name() == wiregen.TypeName(typeName) {
		return
	}
	if typ.Elem() == reflect.TypeFor[jsontext.Value]() && !schema[typeName] {
		t.Logf("%s: %s is not a schema definition and not declared in the package; decoded as raw JSON", what, typeName)
		return
	}
	t.Errorf("%s: constructor returns %v, want *protocol.%s", what, typ, wiregen.TypeName(typeName))
}

// TestActionTable checks the action table against data/action-origin.json
// and data/versions.json.
func TestActionTable(t *testing.T) {
	var origin struct {
		Actions []struct {
			Type               string `json:"type"`
			Scope              string `json:"scope"`
			ClientDispatchable bool   `json:"clientDispatchable"`
			Origin             string `json:"origin"`
		} `json:"actions"`
	}
	var versions struct {
		ActionIntroducedIn map[string]string `json:"ACTION_INTRODUCED_IN"`
	}
	readSpecJSON(t, "data/action-origin.json", &origin)
	readSpecJSON(t, "data/versions.json", &versions)
	var legacy struct {
		ActionIntroducedIn map[string]string `json:"ACTION_INTRODUCED_IN"`
	}
	legacyData, err := os.ReadFile(filepath.Join(specdir.V0.ForTest(t), "data", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(legacyData, &legacy); err != nil {
		t.Fatal(err)
	}

	actions := protocol.Actions()
	if len(origin.Actions) != 106 || len(actions) != 106 {
		t.Fatalf("action-origin.json lists %d actions, the table %d; want 106", len(origin.Actions), len(actions))
	}
	dispatchable := 0
	for i, want := range origin.Actions {
		a, ok := protocol.LookupAction(want.Type)
		if !ok {
			t.Errorf("LookupAction(%q) found nothing", want.Type)
			continue
		}
		if actions[i].Type != want.Type {
			t.Errorf("Actions()[%d] = %q, want %q (spec order)", i, actions[i].Type, want.Type)
		}
		exp := protocol.ActionInfo{
			Type:               want.Type,
			Scope:              protocol.ChannelKind(want.Scope),
			Origin:             protocol.Side(want.Origin),
			ClientDispatchable: want.ClientDispatchable,
			IntroducedIn:       mustVersion(t, versions.ActionIntroducedIn[want.Type]),
		}
		_, exp.Legacy = legacy.ActionIntroducedIn[want.Type]
		if a != exp {
			t.Errorf("LookupAction(%q) = %+v, want %+v", want.Type, a, exp)
		}
		if protocol.ClientDispatchable(want.Type) != want.ClientDispatchable {
			t.Errorf("ClientDispatchable(%q) = %v", want.Type, !want.ClientDispatchable)
		}
		if protocol.ActionScope(want.Type) != exp.Scope {
			t.Errorf("ActionScope(%q) = %q, want %q", want.Type, protocol.ActionScope(want.Type), exp.Scope)
		}
		if want.ClientDispatchable {
			dispatchable++
		}
	}
	if dispatchable != 47 {
		t.Errorf("%d client-dispatchable actions, want 47", dispatchable)
	}
	for _, unknown := range []string{"", "chat/nosuch", "session/diffsChanged", "CHAT/DELTA"} {
		if _, ok := protocol.LookupAction(unknown); ok || protocol.ClientDispatchable(unknown) || protocol.ActionScope(unknown) != "" {
			t.Errorf("unknown action type %q is described", unknown)
		}
	}
}

// TestActionScopesAreChannelKinds checks that every action scope is a kind
// ParseChannel can return, so actions can be matched with their channel.
func TestActionScopesAreChannelKinds(t *testing.T) {
	kinds := map[protocol.ChannelKind]string{
		protocol.ChannelRoot:          protocol.RootURI,
		protocol.ChannelSession:       protocol.SessionURI("s"),
		protocol.ChannelChat:          protocol.ChatURI("c"),
		protocol.ChannelTerminal:      protocol.TerminalURI("t"),
		protocol.ChannelChangeset:     protocol.ChangesetURI("x"),
		protocol.ChannelAnnotations:   protocol.AnnotationsURI("s"),
		protocol.ChannelResourceWatch: protocol.ResourceWatchURI("w"),
		protocol.ChannelCanvas:        "ahp-canvas:/c",
		protocol.ChannelAutomation:    protocol.AutomationsURI,
		protocol.ChannelAutomationRun: "ahp-automation-run:/r",
	}
	for _, a := range protocol.Actions() {
		uri, ok := kinds[a.Scope]
		if !ok {
			t.Errorf("%s: scope %q is not a channel kind", a.Type, a.Scope)
			continue
		}
		if c, err := protocol.ParseChannel(uri); err != nil || c.Kind != a.Scope {
			t.Errorf("%s: ParseChannel(%q) = %+v, %v", a.Type, uri, c, err)
		}
	}
}

func TestActionKnownToVersion(t *testing.T) {
	tests := []struct {
		action, version string
		want            bool
	}{
		{"root/agentsChanged", "0.1.0", true},
		{"chat/delta", "0.4.0", true},
		{"chat/delta", "0.3.9", false},
		{"session/inputNeededSet", "0.5.1", true},
		{"session/inputNeededSet", "0.5.0", false},
		{"session/mcpServerStartRequested", "0.5.1", false},
		{"session/mcpServerStartRequested", "0.5.2", true},
		{"chat/toolCallAuthRequired", "0.5.2", false},
		{"chat/toolCallAuthRequired", "0.6.0", true},
		{"session/workingDirectorySet", "0.6.0", false},
		{"session/workingDirectorySet", "0.7.0", true},
		{"annotations/set", "0.3.0", false}, // corrected to 0.4.0 in the changelog
		{"annotations/set", "0.4.0", true},
		{"chat/turnsLoaded", "0.8.0", true},
		{"chat/delta", "0.9.0", true},
		// Unknown action types and invalid versions are known to nobody.
		{"chat/nosuch", "0.8.0", false},
		{"session/diffsChanged", "0.1.0", false},
		{"chat/delta", "0.8", false},
		{"chat/delta", "v0.8.0", false},
		{"chat/delta", "", false},
	}
	for _, tt := range tests {
		if got := protocol.ActionKnownToVersion(tt.action, tt.version); got != tt.want {
			t.Errorf("ActionKnownToVersion(%q, %q) = %v, want %v", tt.action, tt.version, got, tt.want)
		}
	}
	// Every action is known to the current version.
	for _, a := range protocol.Actions() {
		if !protocol.ActionKnownToVersion(a.Type, protocol.ProtocolVersion) {
			t.Errorf("%s is not known to %s", a.Type, protocol.ProtocolVersion)
		}
	}
}

func TestNotificationKnownToVersion(t *testing.T) {
	tests := []struct {
		method, version string
		want            bool
	}{
		{"root/sessionAdded", "0.1.0", true},
		{"root/progress", "0.4.0", false},
		{"root/progress", "0.5.0", true},
		{"otlp/exportLogs", "0.1.0", false},
		{"otlp/exportLogs", "0.2.0", true},
		{"auth/required", "0.5.1", true},
		// "action" is versioned per action, so the method itself always is.
		{"action", "0.1.0", true},
		{"action", "0.8.0", true},
		{"action", "bogus", false},
		// Requests, client notifications and unknown methods are not server
		// notifications.
		{"initialize", "0.8.0", false},
		{"dispatchAction", "0.8.0", false},
		{"root/nosuch", "0.8.0", false},
		{"root/sessionAdded", "", false},
	}
	for _, tt := range tests {
		if got := protocol.NotificationKnownToVersion(tt.method, tt.version); got != tt.want {
			t.Errorf("NotificationKnownToVersion(%q, %q) = %v, want %v", tt.method, tt.version, got, tt.want)
		}
	}
	// Every server notification is known to the current version.
	for _, m := range protocol.Methods() {
		if m.Notification && m.FromServer && !protocol.NotificationKnownToVersion(m.Name, protocol.ProtocolVersion) {
			t.Errorf("%s is not known to %s", m.Name, protocol.ProtocolVersion)
		}
	}
}

// TestDataGenUpToDate fails when data_gen.go differs from what the
// generator writes from the spec's data files now.
func TestDataGenUpToDate(t *testing.T) {
	want, err := datagen.Generate(specdir.V1.ForTest(t), specdir.V0.ForTest(t), ".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(datagen.OutputFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./protocol", datagen.OutputFile)
	}
	f, err := parser.ParseFile(token.NewFileSet(), datagen.OutputFile, got, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if !ast.IsGenerated(f) {
		t.Errorf("Go tools do not recognise %s as generated", datagen.OutputFile)
	}
	header, _, _ := bytes.Cut(got, []byte("\n"))
	for _, name := range datagen.Inputs {
		if !bytes.Contains(header, []byte(name+" (sha256 ")) {
			t.Errorf("header does not name %s with its hash", name)
		}
	}
}
