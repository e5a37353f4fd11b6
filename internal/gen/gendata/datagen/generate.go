package datagen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/ahp-go/ahp/internal/gen/wiregen"
)

// OutputFile is the name of the generated file in the protocol package.
const OutputFile = "data_gen.go"

// rawJSONType is what a method's constructor allocates when the package
// declares no Go type of the name methods.json gives.
const rawJSONType = "jsontext.Value"

// Generate reads the data files from specDir and returns the formatted
// source of data_gen.go for the Go package in pkgDir.
//
// The params and result constructors of the method table allocate the Go
// type named like the schema type. Generate looks at the type declarations
// of pkgDir (its non-test files other than data_gen.go) and, for a name that
// no file declares, allocates a jsontext.Value holding the raw JSON instead,
// so that the output always compiles. Run it after the wire types have been
// generated.
//
// legacyDir is the 0.8.0 pack: its data/versions.json lists the versions
// 0.5.1 to 0.8.0 that the package still serves, and the actions and
// notifications those versions know.
func Generate(specDir, legacyDir, pkgDir string) ([]byte, error) {
	var ins []input
	for _, name := range Inputs {
		in, err := readInput(specDir, name)
		if err != nil {
			return nil, err
		}
		ins = append(ins, in)
	}
	legacyIn, err := readInput(legacyDir, versionsFile)
	if err != nil {
		return nil, err
	}
	legacyIn.Name = LegacyInput
	legacyMethodsIn, err := readInput(legacyDir, methodsFile)
	if err != nil {
		return nil, err
	}
	legacyMethodsIn.Name = LegacyMethodsInput
	ins = append(ins, legacyIn, legacyMethodsIn)
	var (
		methods  methodsDoc
		versions versionsDoc
		origin   actionOriginDoc
		legacy   versionsDoc
		legacyM  methodsDoc
	)
	for i, v := range []any{&methods, &versions, &origin, &legacy, &legacyM} {
		if err := decode(ins[i], v); err != nil {
			return nil, err
		}
	}
	if err := checkVersions(&versions, false); err != nil {
		return nil, err
	}
	if err := checkVersions(&legacy, true); err != nil {
		return nil, err
	}
	if err := checkLegacy(&versions, &legacy); err != nil {
		return nil, err
	}
	if err := checkActions(&origin, versions.ActionIntroducedIn); err != nil {
		return nil, err
	}
	if err := checkMethods(&methods, versions.NotificationIntroducedIn); err != nil {
		return nil, err
	}
	declared, err := declaredTypes(pkgDir)
	if err != nil {
		return nil, err
	}
	d := buildData(ins, &versions, &origin, &methods, declared)
	d.LegacyVersions = legacy.SupportedVersions
	for i := range d.Actions {
		_, d.Actions[i].Legacy = legacy.ActionIntroducedIn[d.Actions[i].Type]
	}
	for i := range d.Notifications {
		_, d.Notifications[i].Legacy = legacy.NotificationIntroducedIn[d.Notifications[i].Method]
	}
	legacyMethods := map[string]bool{}
	for _, m := range legacyM.Methods {
		legacyMethods[m.Method] = true
	}
	for i := range d.Methods {
		d.Methods[i].Legacy = legacyMethods[d.Methods[i].Name]
	}
	var buf bytes.Buffer
	if err := fileTemplate.Execute(&buf, d); err != nil {
		return nil, err
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the output: %w", err)
	}
	return src, nil
}

// declaredTypes returns the names of the top-level types declared in the
// package in dir, ignoring tests and the generator's own output.
func declaredTypes(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, path := range files {
		base := filepath.Base(path)
		if base == OutputFile || strings.HasSuffix(base, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				names[spec.(*ast.TypeSpec).Name.Name] = true
			}
		}
	}
	return names, nil
}

// The template's data.
type fileData struct {
	Inputs            []input
	ProtocolVersion   string
	SupportedVersions []string
	LegacyVersions    []string
	Actions           []actionRow
	Notifications     []notificationRow
	Methods           []methodRow
	NeedsJSONText     bool
}

type actionRow struct {
	Type               string
	Scope              string // ChannelKind constant
	Origin             string // Side constant
	ClientDispatchable bool
	IntroducedIn       version
	Legacy             bool // listed by the 0.8.0 pack
}

type notificationRow struct {
	Method       string
	IntroducedIn version
	Legacy       bool // listed by the 0.8.0 pack
}

type methodRow struct {
	Name         string
	FromClient   bool
	FromServer   bool
	Notification bool
	RootChannel  bool
	Params       string
	Result       string   // "" for notifications and null results
	ParamsGo     string   // Go type NewParams allocates
	ResultGo     string   // Go type NewResult allocates; "" for none
	Undeclared   []string // schema names without a Go type, kept as raw JSON
	Legacy       bool     // listed by the 0.8.0 pack
}

func buildData(ins []input, versions *versionsDoc, origin *actionOriginDoc, methods *methodsDoc, declared map[string]bool) *fileData {
	d := &fileData{
		Inputs:            ins,
		ProtocolVersion:   versions.ProtocolVersion,
		SupportedVersions: versions.SupportedVersions,
	}
	for _, a := range origin.Actions {
		v, _ := parseVersion(versions.ActionIntroducedIn[a.Type]) // checked
		d.Actions = append(d.Actions, actionRow{
			Type:               a.Type,
			Scope:              scopeKinds[a.Scope],
			Origin:             originSides[a.Origin],
			ClientDispatchable: a.ClientDispatchable,
			IntroducedIn:       v,
		})
	}
	for name, s := range versions.NotificationIntroducedIn {
		v, _ := parseVersion(s) // checked
		d.Notifications = append(d.Notifications, notificationRow{Method: name, IntroducedIn: v})
	}
	slices.SortFunc(d.Notifications, func(a, b notificationRow) int { return strings.Compare(a.Method, b.Method) })
	for _, m := range methods.Methods {
		root, _ := rootOnly(m.ParamsChannel) // checked
		row := methodRow{
			Name:         m.Method,
			FromClient:   m.ClientToServer,
			FromServer:   m.ServerToClient,
			Notification: m.Kind == "notification",
			RootChannel:  root,
			Params:       m.Params,
		}
		if !row.Notification && m.Result != "null" {
			row.Result = m.Result
		}
		goType := func(name string) string {
			if n := wiregen.TypeName(name); declared[n] {
				return n
			}
			d.NeedsJSONText = true
			row.Undeclared = append(row.Undeclared, name)
			return rawJSONType
		}
		row.ParamsGo = goType(row.Params)
		if row.Result != "" {
			row.ResultGo = goType(row.Result)
		}
		d.Methods = append(d.Methods, row)
	}
	return d
}

var fileTemplate = template.Must(template.New("data_gen.go").Parse(fileText))

// fileText is the template of data_gen.go. The header must stay on one line
// so that Go tools recognise the file as generated.
const fileText = `// Code generated by gendata from
{{- range $i, $in := .Inputs}}{{if $i}},{{end}} {{$in.Name}} (sha256 {{$in.SHA256}}){{end}}. DO NOT EDIT.

package protocol
{{if .NeedsJSONText}}
import "github.com/go-json-experiment/json/jsontext"
{{end}}
// ProtocolVersion is the protocol version the wire types describe, the
// newest this package implements.
const ProtocolVersion = "{{.ProtocolVersion}}"

// baselineVersions lists the released 1.x-era compatibility baselines,
// most preferred first: a peer accepts versions in their caret ranges.
var baselineVersions = [...]string{
{{- range .SupportedVersions}}
	"{{.}}",
{{- end}}
}

// legacyVersions lists the older versions, from the 0.8.0 pack, newest
// first.
var legacyVersions = [...]string{
{{- range .LegacyVersions}}
	"{{.}}",
{{- end}}
}

// Side names one end of a connection.
type Side string

// The two sides of a connection.
const (
	ClientSide Side = "client"
	ServerSide Side = "server"
)

// ActionInfo describes one action type.
type ActionInfo struct {
	// Type is the action's wire type, such as "chat/delta".
	Type string
	// Scope is the kind of channel the action travels on; it also names
	// the reducer that applies it.
	Scope ChannelKind
	// Origin is the side that produces the action.
	Origin Side
	// ClientDispatchable reports whether a client may send the action
	// with dispatchAction.
	ClientDispatchable bool
	// IntroducedIn is the protocol version that added the action type.
	IntroducedIn Version
	// Legacy reports that the 0.8.0 pack lists the action: versions up to
	// 0.8.0 know only such actions, whatever IntroducedIn says (a few
	// actions the 1.x tables date 0.8.0 were never part of it).
	Legacy bool
}

// actionTable lists every action type, in the spec's order.
var actionTable = [...]ActionInfo{
{{- range .Actions}}
	{Type: "{{.Type}}", Scope: {{.Scope}}, Origin: {{.Origin}},
	{{- if .ClientDispatchable}} ClientDispatchable: true,{{end}} IntroducedIn: Version{ {{- index .IntroducedIn 0}}, {{index .IntroducedIn 1}}, {{index .IntroducedIn 2 -}} }
	{{- if .Legacy}}, Legacy: true{{end}}},
{{- end}}
}

// notificationIntroducedIn maps each server notification, except "action",
// to the protocol version that added it.
var notificationIntroducedIn = map[string]Version{
{{- range .Notifications}}
	"{{.Method}}": { {{- index .IntroducedIn 0}}, {{index .IntroducedIn 1}}, {{index .IntroducedIn 2 -}} },
{{- end}}
}

// legacyNotifications are the server notifications the 0.8.0 pack lists.
var legacyNotifications = map[string]bool{
{{- range .Notifications}}{{if .Legacy}}
	"{{.Method}}": true,
{{- end}}{{end}}
}

// Method describes one JSON-RPC method of the protocol.
type Method struct {
	// Name is the JSON-RPC method name.
	Name string
	// FromClient and FromServer report which sides may send the method.
	// Requests the server sends are the same methods, with the same params
	// and results, as requests clients send.
	FromClient, FromServer bool
	// Notification reports that the method is sent without an id and never
	// answered; otherwise it is a request.
	Notification bool
	// RootChannel reports that params.channel must be RootURI; otherwise
	// it names whichever channel the message is about.
	RootChannel bool
	// Params is the schema name of the params type.
	Params string
	// Result is the schema name of the result type. It is empty for
	// notifications and for requests whose success result is null.
	Result string
	// NewParams returns a pointer to a new value of the params type.
	NewParams func() any
	// NewResult returns a pointer to a new value of the result type. It is
	// nil when Result is empty.
	NewResult func() any
	// Legacy reports that the 0.8.0 pack lists the method. The data
	// dates no method, so a method it does not list is taken to be known
	// from the 1.x era on (0.9.0 and later) and unknown before.
	Legacy bool
}

// methodTable lists every method, in the spec's order. A constructor
// returns a *jsontext.Value (raw JSON) where the package declares no Go
// type named like the schema type.
var methodTable = [...]Method{
{{- range .Methods}}
	{
		{{- range .Undeclared}}
		// The package declares no type {{.}}: its value stays raw JSON.
		{{- end}}
		Name: "{{.Name}}",
		{{- if .FromClient}} FromClient: true,{{end}}
		{{- if .FromServer}} FromServer: true,{{end}}
		{{- if .Notification}} Notification: true,{{end}}
		{{- if .RootChannel}} RootChannel: true,{{end}}
		Params: "{{.Params}}",
		{{- if .Result}} Result: "{{.Result}}",{{end}}
		NewParams: func() any { return new({{.ParamsGo}}) },
		{{- if .ResultGo}}
		NewResult: func() any { return new({{.ResultGo}}) },
		{{- end}}
		{{- if .Legacy}}
		Legacy: true,
		{{- end}}
	},
{{- end}}
}

var (
	actionIndex = indexBy(actionTable[:], func(a *ActionInfo) string { return a.Type })
	methodIndex = indexBy(methodTable[:], func(m *Method) string { return m.Name })
)

func indexBy[T any](table []T, key func(*T) string) map[string]*T {
	m := make(map[string]*T, len(table))
	for i := range table {
		m[key(&table[i])] = &table[i]
	}
	return m
}

// Actions returns a description of every action type, in the spec's order.
// The caller owns the returned slice.
func Actions() []ActionInfo {
	return append([]ActionInfo(nil), actionTable[:]...)
}

// LookupAction returns the description of the action type, and whether the
// type is known.
func LookupAction(actionType string) (ActionInfo, bool) {
	if a, ok := actionIndex[actionType]; ok {
		return *a, true
	}
	return ActionInfo{}, false
}

// ClientDispatchable reports whether a client may dispatch actions of the
// given type. Unknown types are not dispatchable.
func ClientDispatchable(actionType string) bool {
	a, ok := actionIndex[actionType]
	return ok && a.ClientDispatchable
}

// ActionScope returns the kind of channel that actions of the given type
// travel on, which is also the name of the reducer that applies them. It
// returns "" for an unknown type.
func ActionScope(actionType string) ChannelKind {
	if a, ok := actionIndex[actionType]; ok {
		return a.Scope
	}
	return ""
}

// ActionKnownToVersion reports whether a peer speaking the given protocol
// version knows the action type, that is whether the version is not older
// than the one that introduced the type. A host sends a connection only the
// actions known to its negotiated version. An action type this package does
// not know is known to no version, and neither is anything when version is
// not a valid protocol version.
func ActionKnownToVersion(actionType, version string) bool {
	a, ok := actionIndex[actionType]
	if !ok {
		return false
	}
	v, err := ParseVersion(version)
	return err == nil && a.IntroducedIn.Compare(v) <= 0 && (a.Legacy || !v.Legacy())
}

// NotificationKnownToVersion reports whether a peer speaking the given
// protocol version knows the server notification method. The "action"
// notification exists in every version: gate the action it carries with
// ActionKnownToVersion instead. Any other method that is not a server
// notification of this package is known to no version, and neither is
// anything when version is not a valid protocol version.
func NotificationKnownToVersion(method, version string) bool {
	v, err := ParseVersion(version)
	if err != nil {
		return false
	}
	if method == "action" {
		return true
	}
	intro, ok := notificationIntroducedIn[method]
	return ok && intro.Compare(v) <= 0 && (legacyNotifications[method] || !v.Legacy())
}

// MethodKnownToVersion reports whether a peer speaking the given protocol
// version knows the JSON-RPC method: every version of the 1.x era knows
// every method, and a version before 0.9.0 only the methods the 0.8.0 pack
// lists. An unknown method is known to no version, and neither is anything
// when version is not a valid protocol version.
func MethodKnownToVersion(method, version string) bool {
	m, ok := methodIndex[method]
	if !ok {
		return false
	}
	v, err := ParseVersion(version)
	return err == nil && (m.Legacy || !v.Legacy())
}

// Methods returns a description of every JSON-RPC method, in the spec's
// order. The caller owns the returned slice.
func Methods() []Method {
	return append([]Method(nil), methodTable[:]...)
}

// LookupMethod returns the description of the named JSON-RPC method, and
// whether the method exists.
func LookupMethod(name string) (Method, bool) {
	if m, ok := methodIndex[name]; ok {
		return *m, true
	}
	return Method{}, false
}
`
