package wiregen

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// typeKind says what Go shape a type takes.
type typeKind int

const (
	kString  typeKind = iota // Go string
	kInt                     // Go int64
	kFloat                   // Go float64
	kBool                    // Go bool
	kRaw                     // jsontext.Value: any JSON kept verbatim
	kStruct                  // generated struct
	kStrEnum                 // generated ~string type
	kIntEnum                 // generated ~int64 type
	kBitset                  // generated ~uint32 type
	kUnion                   // generated interface
	kAlias                   // generated alias of string
	kHand                    // hand-written type with its own JSON methods
	kSlice                   // []Elem
	kMap                     // map[string]Elem
)

// goType is the Go type of a field or element.
type goType struct {
	kind typeKind
	name string  // Go type name for named kinds
	elem *goType // for kSlice and kMap
}

func (t *goType) expr() string {
	switch t.kind {
	case kString:
		return "string"
	case kInt:
		return "int64"
	case kFloat:
		return "float64"
	case kBool:
		return "bool"
	case kRaw:
		return "jsontext.Value"
	case kSlice:
		return "[]" + t.elem.expr()
	case kMap:
		return "map[string]" + t.elem.expr()
	}
	return t.name
}

// field is one member of a generated struct.
type field struct {
	json     string
	goName   string
	typ      *goType
	required bool
	consts   []string // a fixed value: the field is not stored, only checked

	// checked: the schema requires the member but older protocol versions
	// lack it, so Go keeps it optional; decoding still reports it absent.
	checked bool
	// legacy: the member exists only in older protocol versions (see
	// legacyMembers); it is optional and never required.
	legacy bool
}

// enumValue is one constant of an enum.
type enumValue struct {
	goName string
	str    string
	num    int64
}

// variant is one member of a discriminated union.
type variant struct {
	tags   []string
	goName string // struct type name
}

// genType is one named Go type to emit.
type genType struct {
	name   string
	kind   typeKind
	file   string
	schema string // schema definition name, or parent.field for inline types
	fields []*field
	values []enumValue

	// unions
	disc     string // discriminator property
	variants []*variant
	external bool // no discriminator: chosen by context, no decoder

	// structs: unions this struct belongs to, and its discriminator property
	unions  []string
	tagProp string
	tagVals []string // fixed values of tagProp when not stored
	custom  bool     // the unmarshal method is hand-written
}

// gen holds the analysis result.
type gen struct {
	spec  *Spec
	types map[string]*genType
}

// handWritten names definitions whose Go types live in hand-written files
// because they are not objects and carry no discriminator.
var handWritten = map[string]bool{
	"StringOrMarkdown": true,
	"JSONPrimitive":    true,
	"ToolInput":        true,
}

// externalUnions are unions chosen by something outside the value (the
// JSON-RPC method, or a sibling member): they get an interface and markers
// but no decoder of their own.
var externalUnions = map[string]bool{
	"ProtocolNotification": true,
	"SnapshotState":        true,
}

// customDecode names structs whose UnmarshalJSONFrom is hand-written.
var customDecode = map[string]bool{
	"Snapshot": true,
}

// intFields are number-typed properties that always hold integers; they
// become int64. Every other JSON Schema number becomes float64.
var intFields = map[string]bool{
	"serverSeq": true, "clientSeq": true, "fromSeq": true, "lastSeenServerSeq": true,
	"exitCode": true, "cols": true, "rows": true, "sizeHint": true, "activeSessions": true,
	"limit": true, "line": true, "character": true, "inputTokens": true, "outputTokens": true,
	"cacheReadTokens": true, "maxContextWindow": true, "maxOutputTokens": true,
	"maxPromptTokens": true, "additions": true, "deletions": true, "files": true,
	"annotationCount": true, "entryCount": true, "turns": true, "maxLatencyMs": true,
	"position": true, "size": true, "offset": true, "rangeStart": true, "rangeEnd": true,
	"durationMs": true, "timestamp": true, "added": true, "removed": true,
}

// fieldTypeOverrides replaces the type of one property ("Def.prop").
var fieldTypeOverrides = map[string]*goType{
	"ChatToolCallApprovedAction.approved":  {kind: kBool},
	"ChatToolCallDeniedAction.approved":    {kind: kBool},
	"ChatToolCallConfirmedAction.approved": {kind: kBool},
	"MarkdownResponsePart.content":         {kind: kHand, name: "Text"},
	"ReasoningResponsePart.content":        {kind: kHand, name: "Text"},
	"TerminalUnclassifiedPart.value":       {kind: kHand, name: "Text"},
	"TerminalCommandPart.output":           {kind: kHand, name: "Text"},
	"ToolCallStreamingState.partialInput":  {kind: kHand, name: "Text"},
}

// fieldNameOverrides renames a property's Go field ("Def.prop").
var fieldNameOverrides = map[string]string{
	"ChatInputNumberQuestion.kind": "NumberKind",
	"ChatInputAnswered.state":      "AnswerState",
}

// intEnumNames names the constants of number enums, which the schema lists
// without names.
var intEnumNames = map[string]map[int64]string{
	"SessionStatus": {
		1: "Idle", 2: "Error", 8: "InProgress", 24: "InputNeeded", 32: "IsRead", 64: "IsArchived",
	},
	"JSONRPCErrorCode": {
		-32700: "ParseError", -32600: "InvalidRequest", -32601: "MethodNotFound",
		-32602: "InvalidParams", -32603: "InternalError",
	},
	// -32006 (ContentNotFound before 0.9.0) is reserved and unassigned at
	// 1.x; -32011 has no name in the schema and is the Conflict the
	// resourceWrite description asks for on an etag mismatch.
	"AHPErrorCode": {
		-32001: "SessionNotFound", -32002: "ProviderNotFound", -32003: "SessionAlreadyExists",
		-32004: "TurnInProgress", -32005: "UnsupportedProtocolVersion",
		-32007: "AuthRequired", -32008: "NotFound", -32009: "PermissionDenied",
		-32010: "AlreadyExists", -32011: "Conflict",
	},
}

// errorCodeEnums are the number enums of error codes. Each becomes an alias
// of the hand-written ErrorCode (the type of Error.Code), and its constants
// are named Code<Name>, so no caller converts between code types.
var errorCodeEnums = map[string]bool{"JSONRPCErrorCode": true, "AHPErrorCode": true}

// checkedRequired are members the 1.x schema requires that protocol
// versions before 1.0 do not send. Their Go fields are optional so that a
// value shaped for an older version encodes without them; decoding still
// reports them absent (see MissingError).
var checkedRequired = map[string]bool{
	"Annotation.origin":                            true,
	"ChatErrorAction.part":                         true,
	"SessionCustomizationToggledAction.enablement": true,
	"TerminalInfo.lifecycle":                       true,
	"TerminalSessionClaim.chat":                    true,
	"TerminalState.lifecycle":                      true,
}

// legacyMember is a member older protocol versions carry and the 1.x
// schema dropped.
type legacyMember struct {
	json string
	typ  *goType
}

// legacyMembers adds to a 1.x type the members it had in older versions, so
// that one Go type can hold both shapes: the per-version views of the host
// and client move values between them. They are optional and the 1.x
// encoders write them only when set, which 1.x views never do.
var legacyMembers = map[string][]legacyMember{
	"Annotation":                         {{"turnId", &goType{kind: kString}}},
	"AnnotationsUpdatedAction":           {{"turnId", &goType{kind: kString}}},
	"ChangesetContentChangedAction":      {{"error", &goType{kind: kStruct, name: "ErrorInfo"}}},
	"ChatErrorAction":                    {{"error", &goType{kind: kStruct, name: "ErrorInfo"}}},
	"ClientPluginCustomization":          {{"enabled", &goType{kind: kBool}}},
	"ContainerCustomizationBase":         {{"enabled", &goType{kind: kBool}}},
	"CreateSessionParams":                {{"fork", &goType{kind: kRaw}}, {"workingDirectory", &goType{kind: kString}}},
	"CreateChatParams":                   {{"workingDirectory", &goType{kind: kString}}},
	"SessionState":                       {{"workingDirectory", &goType{kind: kString}}},
	"SessionSummary":                     {{"workingDirectory", &goType{kind: kString}}},
	"SessionSummaryChangedParamsChanges": {{"workingDirectory", &goType{kind: kString}}},
	"ChatSummary":                        {{"workingDirectory", &goType{kind: kString}}},
	"SessionChatUpdatedActionChanges":    {{"workingDirectory", &goType{kind: kString}}},
	// 0.5.x kept a chat's open input requests beside its turns.
	"ChatState": {{"workingDirectory", &goType{kind: kString}},
		{"inputRequests", &goType{kind: kSlice, elem: &goType{kind: kStruct, name: "ChatInputRequest"}}}},
	"MCPServerCustomization":            {{"enabled", &goType{kind: kBool}}},
	"PluginCustomization":               {{"enabled", &goType{kind: kBool}}},
	"SessionCustomizationToggledAction": {{"enabled", &goType{kind: kBool}}},
	"TerminalInfo":                      {{"exitCode", &goType{kind: kInt}}},
	"TerminalState":                     {{"exitCode", &goType{kind: kInt}}},
	"Turn":                              {{"error", &goType{kind: kStruct, name: "ErrorInfo"}}},
}

// splitTypes are the states a streamed delta copies, each once per delta:
// a chat and its active turn. Each keeps the members named in own in the
// struct itself and the rest in a second struct (shared), embedded by
// pointer, which states that differ only in their own members share. A
// delta then copies a few words of each instead of every member. Both
// carry a noCopy marker, since a plain copy would share the embedded
// struct (go vet reports such copies; Clone makes a safe one).
var splitTypes = map[string]struct {
	shared string
	own    []string
}{
	"ChatState":  {shared: "ChatStateFields", own: []string{"activeTurn"}},
	"ActiveTurn": {shared: "ActiveTurnFields", own: []string{"responseParts"}},
}

// partialTypes are "changes" objects where every member is optional, an
// absent member means unchanged and a null member means cleared. They get
// a Cleared field listing the members received (or to be sent) as null.
var partialTypes = map[string]bool{
	"SessionChatUpdatedActionChanges":    true,
	"SessionSummaryChangedParamsChanges": true,
}

// bitsets are number enums whose values combine as flags.
var bitsets = map[string]bool{"SessionStatus": true}

// discPreference orders candidate discriminator properties.
var discPreference = []string{"type", "kind", "status", "state"}

func (g *gen) add(t *genType) {
	if old, ok := g.types[t.name]; ok {
		panic(fmt.Sprintf("wiregen: type %s defined twice (%s and %s)", t.name, old.schema, t.schema))
	}
	g.types[t.name] = t
}

// syntheticUnions are unions the method table names but the schema does
// not define; each is built from its variants, which the schema does define.
var syntheticUnions = map[string]struct {
	file     string
	variants []string
}{}

func (g *gen) analyze() error {
	for name, u := range syntheticUnions {
		if _, ok := g.spec.defs[name]; ok {
			return fmt.Errorf("%s is now defined by the schema; remove it from syntheticUnions", name)
		}
		var alts []any
		for _, v := range u.variants {
			alts = append(alts, node{"$ref": "#/$defs/" + v})
		}
		g.spec.defs[name] = node{"oneOf": alts}
		g.spec.home[name] = u.file
	}
	for _, name := range g.spec.names() {
		if handWritten[name] {
			continue
		}
		if err := g.analyzeDef(name, g.spec.defs[name], g.spec.home[name]); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return g.linkUnions()
}

func (g *gen) analyzeDef(name string, d node, file string) error {
	schema := g.spec.schemaName(name)
	switch {
	case g.mergedUnion(name):
		return g.analyzeStruct(name, schema, d, file)
	case d["oneOf"] != nil:
		return g.analyzeOneOf(name, schema, d, file)
	case d["enum"] != nil:
		return g.analyzeEnum(name, schema, d, file)
	case d["properties"] != nil || d["type"] == "object":
		return g.analyzeStruct(name, schema, d, file)
	case d["type"] == "string":
		g.add(&genType{name: name, kind: kAlias, file: file, schema: schema})
		return nil
	}
	return fmt.Errorf("unsupported definition shape")
}

func (g *gen) analyzeEnum(goName, schemaName string, d node, file string) error {
	t := &genType{name: goName, file: file, schema: schemaName}
	vals := d["enum"].([]any)
	switch d["type"] {
	case "number", "integer":
		t.kind = kIntEnum
		if bitsets[goName] {
			t.kind = kBitset
		}
		names := intEnumNames[goName]
		for _, v := range vals {
			n, err := v.(json.Number).Int64()
			if err != nil {
				return err
			}
			label, ok := names[n]
			if !ok {
				return fmt.Errorf("no name for value %d; add it to intEnumNames", n)
			}
			prefix := goName
			if errorCodeEnums[goName] {
				prefix = "Code"
			}
			t.values = append(t.values, enumValue{goName: prefix + label, num: n})
		}
	default:
		t.kind = kStrEnum
		for _, v := range vals {
			s := v.(string)
			t.values = append(t.values, enumValue{goName: goName + pascal(s), str: s})
		}
	}
	g.add(t)
	return nil
}

// constValues returns the fixed string values a property schema allows when
// it is a const, a oneOf of consts or a string enum.
func constValues(p node) ([]string, bool) {
	if c, ok := p["const"].(string); ok {
		return []string{c}, true
	}
	if vals, ok := p["enum"].([]any); ok && p["type"] == "string" && len(vals) == 1 {
		return []string{vals[0].(string)}, true
	}
	if alts, ok := p["oneOf"].([]any); ok && len(alts) > 0 {
		var out []string
		for _, a := range alts {
			c, ok := a.(node)["const"].(string)
			if !ok {
				return nil, false
			}
			out = append(out, c)
		}
		return out, true
	}
	return nil, false
}

func (g *gen) analyzeOneOf(goName, schemaName string, d node, file string) error {
	alts := d["oneOf"].([]any)
	if vals, ok := constValues(d); ok {
		t := &genType{name: goName, kind: kStrEnum, file: file, schema: schemaName}
		for _, s := range vals {
			t.values = append(t.values, enumValue{goName: goName + pascal(s), str: s})
		}
		g.add(t)
		return nil
	}
	t := &genType{name: goName, kind: kUnion, file: file, schema: schemaName}
	if externalUnions[goName] {
		t.external = true
	}
	// Resolve each alternative to a struct (a named definition or an inline
	// object) and find the discriminator.
	type alt struct {
		ref    string // named definition
		inline node
	}
	var resolved []alt
	for _, a := range alts {
		m := a.(node)
		if ref, ok := m["$ref"].(string); ok {
			resolved = append(resolved, alt{ref: refName(ref)})
		} else {
			resolved = append(resolved, alt{inline: m})
		}
	}
	schemaOf := func(a alt) node {
		if a.ref != "" {
			return g.spec.defs[a.ref]
		}
		return a.inline
	}
	if t.external {
		for _, a := range resolved {
			t.variants = append(t.variants, &variant{goName: a.ref})
		}
		g.add(t)
		return nil
	}
	// Expand alternatives that are unions themselves, unless every variant
	// of that union shares one tag (then it is a single merged struct).
	var flat []alt
	for _, a := range resolved {
		s := schemaOf(a)
		if s["oneOf"] != nil && a.ref != "" && !g.mergedUnion(a.ref) {
			for _, sub := range s["oneOf"].([]any) {
				flat = append(flat, alt{ref: refName(sub.(node)["$ref"].(string))})
			}
			continue
		}
		flat = append(flat, a)
	}
	disc := ""
	for _, cand := range discPreference {
		ok := true
		for _, a := range flat {
			s := schemaOf(a)
			if a.ref != "" && g.mergedUnion(a.ref) {
				s = g.spec.defs[refName(s["oneOf"].([]any)[0].(node)["$ref"].(string))]
			}
			p, _ := s["properties"].(node)
			if _, has := constValues(asNode(p[cand])); !has {
				ok = false
				break
			}
		}
		if ok {
			disc = cand
			break
		}
	}
	if disc == "" {
		return fmt.Errorf("union without a discriminator; list it in handWritten or externalUnions")
	}
	t.disc = disc
	seen := map[string]string{}
	for _, a := range flat {
		s := schemaOf(a)
		name := a.ref
		if a.ref != "" && g.mergedUnion(a.ref) {
			s = g.spec.defs[refName(s["oneOf"].([]any)[0].(node)["$ref"].(string))]
		}
		tags, _ := constValues(asNode(s["properties"].(node)[disc]))
		if name == "" {
			name = goName + pascal(tags[0])
			if err := g.analyzeStruct(name, schemaName+"."+tags[0], a.inline, file); err != nil {
				return err
			}
		}
		for _, tag := range tags {
			if prev, dup := seen[tag]; dup {
				return fmt.Errorf("tag %q used by %s and %s", tag, prev, name)
			}
			seen[tag] = name
		}
		t.variants = append(t.variants, &variant{tags: tags, goName: name})
	}
	g.add(t)
	return nil
}

// mergedUnion reports whether the named definition is a union whose
// variants all carry the same single tag, which is generated as one struct
// holding the members of every variant.
func (g *gen) mergedUnion(name string) bool {
	d := g.spec.defs[name]
	alts, ok := d["oneOf"].([]any)
	if !ok || len(alts) < 2 {
		return false
	}
	common := ""
	for _, a := range alts {
		ref, ok := a.(node)["$ref"].(string)
		if !ok {
			return false
		}
		p, _ := g.spec.defs[refName(ref)]["properties"].(node)
		c, ok := asNode(p["type"])["const"].(string)
		if !ok || (common != "" && c != common) {
			return false
		}
		common = c
	}
	return true
}

func asNode(v any) node {
	n, _ := v.(node)
	return n
}

func refName(ref string) string {
	return strings.TrimPrefix(ref, "#/$defs/")
}

// analyzeStruct records an object type. A merged union definition is
// turned into one struct with the members of all its variants.
func (g *gen) analyzeStruct(goName, schemaName string, d node, file string) error {
	t := &genType{name: goName, kind: kStruct, file: file, schema: schemaName, custom: customDecode[goName]}
	type src struct {
		props    node
		order    []string
		required map[string]bool
	}
	var srcs []src
	collect := func(n node) {
		req := map[string]bool{}
		for _, r := range asSlice(n["required"]) {
			req[r.(string)] = true
		}
		srcs = append(srcs, src{props: asNode(n["properties"]), order: propNames(n), required: req})
	}
	if alts, ok := d["oneOf"].([]any); ok {
		for _, a := range alts {
			collect(g.spec.defs[refName(a.(node)["$ref"].(string))])
		}
	} else {
		collect(d)
	}
	byName := map[string]*field{}
	goNames := map[string]string{}
	for _, s := range srcs {
		for _, p := range s.order {
			if _, ok := byName[p]; ok {
				continue // a later variant of a merged union repeats it
			}
			ps := asNode(s.props[p])
			f := &field{json: p, required: s.required[p]}
			if vals, ok := constValues(ps); ok && len(vals) == 1 && f.required {
				f.consts = vals
			} else {
				typ, err := g.fieldType(goName, p, ps, file)
				if err != nil {
					return fmt.Errorf("property %s: %w", p, err)
				}
				f.typ = typ
			}
			f.goName = fieldGoName(goName, p)
			if prev, dup := goNames[f.goName]; dup {
				return fmt.Errorf("properties %s and %s map to one Go name %s", prev, p, f.goName)
			}
			goNames[f.goName] = p
			byName[p] = f
			t.fields = append(t.fields, f)
		}
	}
	for _, m := range legacyMembers[goName] {
		if _, ok := byName[m.json]; ok {
			return fmt.Errorf("legacy member %s is in the schema; remove it from legacyMembers", m.json)
		}
		f := &field{json: m.json, goName: fieldGoName(goName, m.json), typ: m.typ, legacy: true}
		byName[m.json] = f
		t.fields = append(t.fields, f)
	}
	if len(srcs) > 1 {
		// Required members of a merged struct are those required by all.
		for _, f := range t.fields {
			all := true
			for _, s := range srcs {
				all = all && s.required[f.json]
			}
			f.required = all
		}
	}
	for _, f := range t.fields {
		if f.required && checkedRequired[goName+"."+f.json] {
			f.required, f.checked = false, true
		}
	}
	g.add(t)
	return nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// fieldType maps the schema of property prop of struct parent to a Go type,
// creating named inline types as needed.
func (g *gen) fieldType(parent, prop string, p node, file string) (*goType, error) {
	if o, ok := fieldTypeOverrides[parent+"."+prop]; ok {
		return o, nil
	}
	return g.schemaType(parent+pascal(prop), parent+"."+prop, prop, p, file)
}

// schemaType maps a schema to a Go type. inlineName names a type created
// for an inline enum, object or union; prop is the property name (used to
// pick int64 for integer-valued numbers).
func (g *gen) schemaType(inlineName, schemaName, prop string, p node, file string) (*goType, error) {
	if ref, ok := p["$ref"].(string); ok {
		return g.refType(refName(ref))
	}
	if _, ok := constValues(p); ok || p["enum"] != nil {
		if p["enum"] != nil {
			if err := g.analyzeEnum(inlineName, schemaName, p, file); err != nil {
				return nil, err
			}
		} else if err := g.analyzeOneOf(inlineName, schemaName, p, file); err != nil {
			return nil, err
		}
		return &goType{kind: kStrEnum, name: inlineName}, nil
	}
	if p["oneOf"] != nil {
		if err := g.analyzeOneOf(inlineName, schemaName, p, file); err != nil {
			return nil, err
		}
		return &goType{kind: kUnion, name: inlineName}, nil
	}
	switch p["type"] {
	case "string":
		return &goType{kind: kString}, nil
	case "boolean":
		return &goType{kind: kBool}, nil
	case "number", "integer":
		if intFields[prop] || p["type"] == "integer" {
			return &goType{kind: kInt}, nil
		}
		return &goType{kind: kFloat}, nil
	case "array":
		items := asNode(p["items"])
		elem, err := g.schemaType(strings.TrimSuffix(inlineName, "s")+"Item", schemaName+"[]", prop, items, file)
		if err != nil {
			return nil, err
		}
		return &goType{kind: kSlice, elem: elem}, nil
	case "object":
		if p["properties"] != nil {
			if err := g.analyzeStruct(inlineName, schemaName, p, file); err != nil {
				return nil, err
			}
			return &goType{kind: kStruct, name: inlineName}, nil
		}
		ap := asNode(p["additionalProperties"])
		if len(ap) == 0 || onlyOrder(ap) || ap["type"] == "object" && ap["properties"] == nil {
			return &goType{kind: kMap, elem: &goType{kind: kRaw}}, nil
		}
		elem, err := g.schemaType(inlineName+"Value", schemaName+"{}", "", ap, file)
		if err != nil {
			return nil, err
		}
		return &goType{kind: kMap, elem: elem}, nil
	case nil:
		return &goType{kind: kRaw}, nil
	}
	return nil, fmt.Errorf("unsupported schema %v", p["type"])
}

func onlyOrder(n node) bool {
	for k := range n {
		if k != orderKey && k != "description" {
			return false
		}
	}
	return true
}

// refType returns the Go type of a named definition.
func (g *gen) refType(name string) (*goType, error) {
	d, ok := g.spec.defs[name]
	if !ok {
		return nil, fmt.Errorf("unknown definition %q", name)
	}
	if handWritten[name] {
		return &goType{kind: kHand, name: name}, nil
	}
	switch {
	case d["oneOf"] != nil:
		if _, ok := constValues(d); ok {
			return &goType{kind: kStrEnum, name: name}, nil
		}
		if g.mergedUnion(name) {
			return &goType{kind: kStruct, name: name}, nil
		}
		return &goType{kind: kUnion, name: name}, nil
	case d["enum"] != nil:
		if d["type"] == "number" || d["type"] == "integer" {
			if bitsets[name] {
				return &goType{kind: kBitset, name: name}, nil
			}
			return &goType{kind: kIntEnum, name: name}, nil
		}
		return &goType{kind: kStrEnum, name: name}, nil
	case d["type"] == "string":
		return &goType{kind: kAlias, name: name}, nil
	}
	return &goType{kind: kStruct, name: name}, nil
}

// linkUnions records on each variant struct the unions it belongs to and
// its tag, after checking that a struct uses one discriminator everywhere.
func (g *gen) linkUnions() error {
	names := make([]string, 0, len(g.types))
	for n := range g.types {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		u := g.types[n]
		if u.kind != kUnion {
			continue
		}
		for _, v := range u.variants {
			s, ok := g.types[v.goName]
			if !ok || s.kind != kStruct {
				return fmt.Errorf("union %s: variant %s is not a generated struct", n, v.goName)
			}
			s.unions = append(s.unions, n)
			if u.external {
				continue
			}
			if s.tagProp != "" && s.tagProp != u.disc {
				return fmt.Errorf("struct %s is tagged by both %s and %s", s.name, s.tagProp, u.disc)
			}
			s.tagProp = u.disc
			for _, f := range s.fields {
				if f.json == u.disc && len(f.consts) == 1 {
					s.tagVals = f.consts
				}
			}
		}
	}
	return nil
}

// initialisms are words written in capitals in Go names.
var initialisms = map[string]string{
	"id": "ID", "uri": "URI", "url": "URL", "json": "JSON", "http": "HTTP",
	"https": "HTTPS", "api": "API", "ids": "IDs", "uris": "URIs", "urls": "URLs",
	"ahp": "AHP", "rpc": "RPC", "mcp": "MCP", "tcp": "TCP", "acp": "ACP",
	"ui": "UI", "otlp": "OTLP", "eof": "EOF", "jwks": "JWKS",
}

// pascal turns a JSON name or enum value into an exported Go identifier.
func pascal(s string) string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	var b strings.Builder
	for _, w := range words {
		if up, ok := initialisms[strings.ToLower(w)]; ok {
			b.WriteString(up)
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	if b.Len() == 0 {
		return "X"
	}
	out := b.String()
	if unicode.IsDigit([]rune(out)[0]) {
		out = "V" + out
	}
	return out
}

func fieldGoName(parent, prop string) string {
	if n, ok := fieldNameOverrides[parent+"."+prop]; ok {
		return n
	}
	return pascal(prop)
}
