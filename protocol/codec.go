package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// This file is the small runtime the generated encoders and decoders call.
// Decoding streams tokens from a jsontext.Decoder once; union values are
// dispatched on their tag without re-reading the bytes when the tag is the
// first member, which is how every encoder here writes it.

// memberDecoder is implemented by every generated struct. decodeMember
// decodes the member called name and reports its bit in the struct's
// required set (0 for a member that is not required).
type memberDecoder interface {
	decodeMember(dec *jsontext.Decoder, name []byte) (seen uint64, err error)
	required() *requiredMembers
}

// requiredMembers names a struct's required members in bit order: bit i of
// what decodeMember reports stands for the member at index i.
type requiredMembers []string

// jsonDecoder is implemented by every generated struct and hand-written
// wire type: decodeJSON is UnmarshalJSONFrom that reports absent required
// members as a *MissingError after decoding everything else.
type jsonDecoder interface {
	decodeJSON(dec *jsontext.Decoder) error
}

// unionMember is implemented by every struct that is a union variant.
type unionMember interface {
	memberDecoder
	setTag(tag []byte)
}

// marshaler is the method set json.Marshal uses on generated types.
type marshaler interface {
	MarshalJSONTo(*jsontext.Encoder) error
}

// Unmarshal decodes one JSON value into v, which is usually a pointer to a
// generated type. It also fills pointers to union interfaces (such as
// *StateAction), which json.Unmarshal cannot. Trailing data is an error.
// Required members absent from data are left zero; [UnmarshalStrict]
// reports them.
func Unmarshal(data []byte, v any) error {
	if ok, err := unmarshalUnion(data, v); ok {
		return lenient(err)
	}
	// The generated UnmarshalJSONFrom methods drop a *MissingError.
	return json.Unmarshal(data, v)
}

// UnmarshalStrict is [Unmarshal] that also tells a required member that is
// absent from one that is present but empty: when any is absent, anywhere
// in the value, it decodes everything else and returns a *[MissingError]
// naming each absent member by its path. Any other error is returned as
// Unmarshal returns it. Decoding stays a single pass.
func UnmarshalStrict(data []byte, v any) error {
	if env, ok := v.(*ActionEnvelope); ok && fastDecodeEnvelope(data, env) {
		return nil // a streamed action (see fastpath.go)
	}
	if ok, err := unmarshalUnion(data, v); ok {
		return err
	}
	if d, ok := v.(jsonDecoder); ok {
		return unmarshalWith(data, d.decodeJSON)
	}
	return json.Unmarshal(data, v)
}

// UnmarshalChecked is [Unmarshal] for the params of a client's request:
// members present with a value their schema type does not allow are
// refused even where Unmarshal reads past them (null for a required member,
// a string outside an enumeration), while an absent required member still
// decodes as its zero value and a null optional one as absent. Every error
// names the member at fault: "member mode is \"x\", which is not one of
// ...", "member uri: want a JSON string, got 5".
func UnmarshalChecked(data []byte, v any) error {
	err := UnmarshalStrict(data, v)
	var m *MissingError
	if !errors.As(err, &m) {
		if err != nil {
			return &checkedError{msg: DescribeError(err), err: err}
		}
		return nil
	}
	var bad []string
	for _, inv := range m.Invalid {
		if !inv.OptionalNull {
			bad = append(bad, "member "+inv.String())
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &checkedError{msg: strings.Join(bad, "; "), err: m}
}

// DescribeError says why decoding failed, naming the member when the
// error does (see ErrorPath).
func DescribeError(err error) string {
	if path, cause := ErrorPath(err); path != "" {
		return "member " + path + ": " + cause.Error()
	}
	return err.Error()
}

type checkedError struct {
	msg string
	err error
}

func (e *checkedError) Error() string { return e.msg }
func (e *checkedError) Unwrap() error { return e.err }

// MissingError reports required members absent from decoded JSON, and
// members present with a value their schema type does not allow but which
// the decoder could still read past: null where the schema has no null (a
// null that clears a member of a "changes" object is allowed), and a
// string outside a closed enumeration. The value was decoded completely
// otherwise: an absent or null member holds its zero value, an enumeration
// the string it had. The lenient decoders ([Unmarshal], UnmarshalJSONFrom)
// drop it; [UnmarshalStrict] returns it, so input from clients can be
// refused member by member. A member of the wrong JSON kind (a number
// where a string belongs) is a plain error from every decoder.
type MissingError struct {
	// Paths names each absent member from the decoded value down, with
	// members joined by "." and array elements and map entries as [i] and
	// ["key"]: "action.turnId", "turns[2].id".
	Paths []string
	// Invalid lists the members present with a value of the wrong type,
	// named the same way.
	Invalid []InvalidMember
}

// InvalidMember is a member whose value its schema type does not allow.
type InvalidMember struct {
	Path string
	// Problem says what is wrong, for people: "is null, which its type
	// does not allow".
	Problem string
	// OptionalNull says the member is optional and was null; it decoded
	// as absent. Only the strictest reading (client actions) refuses it.
	OptionalNull bool
}

func (m InvalidMember) String() string { return m.Path + " " + m.Problem }

func (e *MissingError) Error() string {
	var b strings.Builder
	b.WriteString("protocol: ")
	if len(e.Paths) > 0 {
		b.WriteString("missing required member")
		if len(e.Paths) > 1 {
			b.WriteString("s")
		}
		for i, p := range e.Paths {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(" ")
			b.WriteString(strconv.Quote(p))
		}
	}
	for i, m := range e.Invalid {
		if i > 0 || len(e.Paths) > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strconv.Quote(m.Path))
		b.WriteString(" ")
		b.WriteString(m.Problem)
	}
	return b.String()
}

// Has reports whether the member at path is among the absent ones.
func (e *MissingError) Has(path string) bool { return slices.Contains(e.Paths, path) }

// HasInvalid reports whether the member at path is among the invalid ones.
func (e *MissingError) HasInvalid(path string) bool {
	return slices.ContainsFunc(e.Invalid, func(m InvalidMember) bool { return m.Path == path })
}

// Without returns the error without the absent paths drop reports true
// for, or nil when nothing, absent or invalid, is left. It is how a caller
// that supplies some members itself (an older version's view, say) keeps
// only what is really missing. Invalid members are all kept.
func (e *MissingError) Without(drop func(path string) bool) error {
	var kept []string
	for _, p := range e.Paths {
		if !drop(p) {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 && len(e.Invalid) == 0 {
		return nil
	}
	return &MissingError{Paths: kept, Invalid: e.Invalid}
}

// lenient drops a *MissingError: the value it came with is complete.
func lenient(err error) error {
	if _, ok := err.(*MissingError); ok {
		return nil
	}
	return err
}

// under returns err with its missing and invalid paths placed under the
// member name. An empty path is the member itself.
func under(name string, err error) error {
	m, ok := err.(*MissingError)
	if !ok {
		return err
	}
	for i, p := range m.Paths {
		m.Paths[i] = joinPath(name, p)
	}
	for i := range m.Invalid {
		m.Invalid[i].Path = joinPath(name, m.Invalid[i].Path)
	}
	return m
}

func joinPath(name, p string) string {
	switch {
	case p == "":
		return name
	case strings.HasPrefix(p, "["):
		return name + p
	}
	return name + "." + p
}

// merge adds the paths of soft to m, allocating m when needed.
func (m *MissingError) merge(soft *MissingError) *MissingError {
	if m == nil {
		return soft
	}
	m.Paths = append(m.Paths, soft.Paths...)
	m.Invalid = append(m.Invalid, soft.Invalid...)
	return m
}

// memberError is a decoding error inside a member (name) of a value of
// type typ, or inside an array element or map entry (name "[i]" or
// "[\"key\"]", typ ""). It reads as it always has ("protocol: Type.member:
// cause"); ErrorPath recovers the member's path from a chain of them.
type memberError struct {
	typ, name string
	err       error
}

func memberErr(typ, name string, err error) error {
	return &memberError{typ: typ, name: name, err: err}
}

func (e *memberError) Error() string {
	if e.typ == "" {
		return e.name + ": " + e.err.Error()
	}
	return "protocol: " + e.typ + "." + e.name + ": " + e.err.Error()
}

func (e *memberError) Unwrap() error { return e.err }

// ErrorPath returns the path of the member a decoding error is about, in
// the form of MissingError's paths ("action.message.attachments[1]"),
// and the error's cause without the path; "" and err itself when the
// error names no member.
func ErrorPath(err error) (path string, cause error) {
	var me *memberError
	if !errors.As(err, &me) {
		return "", err
	}
	var b strings.Builder
	for {
		if b.Len() > 0 && !strings.HasPrefix(me.name, "[") {
			b.WriteByte('.')
		}
		b.WriteString(me.name)
		cause = me.err
		next, ok := me.err.(*memberError)
		if !ok {
			break
		}
		me = next
	}
	return b.String(), cause
}

// nullMember reads the null the decoder is at, for a member (name) or an
// element (name "") whose type does not allow null, and reports it.
func nullMember(dec *jsontext.Decoder, name string) error {
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	return &MissingError{Invalid: []InvalidMember{{Path: name, Problem: "is null, which its type does not allow"}}}
}

// nullSoft reports the null a scalar reader has just read, for a member
// (or element) whose type does not allow it; the caller places it under
// the member's name.
func nullSoft() error {
	return &MissingError{Invalid: []InvalidMember{{Problem: "is null, which its type does not allow"}}}
}

// nullOptional is nullMember for an optional member, which decodes as
// absent.
func nullOptional(dec *jsontext.Decoder, name string) error {
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	return &MissingError{Invalid: []InvalidMember{{Path: name, Problem: "is null, which its type does not allow (leave it out instead)", OptionalNull: true}}}
}

// enumeration is implemented by the generated string enumerations.
type enumeration interface {
	~string
	known() bool
	values() []string
}

// readEnum reads a string enumeration. A value outside the listed ones is
// kept, and reported as invalid for the strict decoder.
func readEnum[T enumeration](dec *jsontext.Decoder) (T, error) {
	s, err := readStr(dec)
	v := T(s)
	if err != nil || v.known() {
		return v, err
	}
	return v, &MissingError{Invalid: []InvalidMember{{Problem: fmt.Sprintf("is %s, which is not one of %s", strconv.Quote(s), strings.Join(v.values(), ", "))}}}
}

// checkRequired adds to missing the members of req whose bits are not in
// seen and returns the error to report, nil when nothing is missing.
func checkRequired(missing *MissingError, req *requiredMembers, seen uint64) error {
	if req != nil && seen != 1<<len(*req)-1 {
		for i, n := range *req {
			if seen&(1<<i) == 0 {
				missing = missing.merge(&MissingError{Paths: []string{n}})
			}
		}
	}
	if missing == nil {
		return nil
	}
	return missing
}

// Marshal encodes v as compact JSON.
func Marshal(v any) ([]byte, error) {
	return json.Marshal(v)
}

// Decode decodes data as the schema type called typeName (for example
// "ActionEnvelope" or "StateAction") and returns a pointer to a struct, a
// union value, or an enum value.
func Decode(typeName string, data []byte) (any, error) {
	fn, ok := wireTypes[typeName]
	if !ok {
		fn, ok = handTypes[typeName]
	}
	if !ok {
		return nil, fmt.Errorf("protocol: unknown wire type %q", typeName)
	}
	var v any
	err := unmarshalWith(data, func(dec *jsontext.Decoder) (err error) {
		v, err = fn(dec)
		return err
	})
	return v, lenient(err)
}

// unmarshalWith decodes data with fn on the library's pooled decoder. A
// *MissingError from fn is returned once the whole value has been read.
func unmarshalWith(data []byte, fn func(*jsontext.Decoder) error) error {
	d := softDecoder{fn: fn}
	if err := json.Unmarshal(data, &d); err != nil {
		return err
	}
	if d.missing != nil {
		return d.missing
	}
	return nil
}

// softDecoder runs a decode function for json.Unmarshal, keeping a
// *MissingError aside so that the library still checks the end of the
// input. (A struct rather than a closure: one allocation, as before.)
type softDecoder struct {
	fn      func(*jsontext.Decoder) error
	missing *MissingError
}

func (d *softDecoder) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	err := d.fn(dec)
	if m, ok := err.(*MissingError); ok {
		d.missing = m
		return nil
	}
	return err
}

// open reads the start of a JSON object or array (want is '{' or '['). It
// reports null when the value is null instead, which it consumes.
func open(dec *jsontext.Decoder, want jsontext.Kind) (null bool, err error) {
	switch k := dec.PeekKind(); k {
	case 'n':
		_, err := dec.ReadToken()
		return true, err
	case want:
		_, err := dec.ReadToken()
		return false, err
	default:
		if _, err := dec.ReadToken(); err != nil {
			return false, err
		}
		what := "an object"
		if want == '[' {
			what = "an array"
		}
		return false, fmt.Errorf("want a JSON %s, got %v", what, k)
	}
}

// decodeObject reads a JSON object into x. null leaves x as it is. When
// required members are absent, here or deeper, it reads the whole object
// and then returns a *MissingError.
func decodeObject(dec *jsontext.Decoder, typ string, x memberDecoder) error {
	if null, err := open(dec, '{'); null || err != nil {
		if err != nil {
			return fmt.Errorf("protocol: %s: %w", typ, err)
		}
		return nil
	}
	var seen uint64
	var missing *MissingError
	for dec.PeekKind() != '}' {
		name, err := readName(dec)
		if err != nil {
			return fmt.Errorf("protocol: %s: %w", typ, err)
		}
		bit, err := x.decodeMember(dec, name)
		seen |= bit
		if err != nil {
			if m, ok := err.(*MissingError); ok {
				missing = missing.merge(m)
				continue
			}
			return memberErr(typ, string(name), err)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	return checkRequired(missing, x.required(), seen)
}

// unquote returns the content of a JSON string, without copying when it
// has no escapes.
func unquote(raw []byte) ([]byte, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	return jsontext.AppendUnquote(nil, raw)
}

// readName reads an object member name and returns it unquoted. The bytes
// are only valid until the next read from dec.
func readName(dec *jsontext.Decoder) ([]byte, error) {
	raw, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if len(raw) < 2 || raw[0] != '"' {
		return nil, fmt.Errorf("invalid member name %s", raw)
	}
	return unquote(raw)
}

func readString(dec *jsontext.Decoder) (string, error) {
	raw, err := dec.ReadValue()
	if err != nil {
		return "", err
	}
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return string(raw[1 : len(raw)-1]), nil
		}
		b, err := jsontext.AppendUnquote(nil, raw)
		return string(b), err
	case string(raw) == "null":
		return "", nil
	}
	return "", fmt.Errorf("want a JSON string, got %s", truncate(raw))
}

// readStr is readString for a member of type string: null is read past
// and reported as invalid (see MissingError), where readString reads it
// as "".
func readStr(dec *jsontext.Decoder) (string, error) {
	raw, err := dec.ReadValue()
	if err != nil {
		return "", err
	}
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return string(raw[1 : len(raw)-1]), nil
		}
		b, err := jsontext.AppendUnquote(nil, raw)
		return string(b), err
	case string(raw) == "null":
		return "", nullSoft()
	}
	return "", fmt.Errorf("want a JSON string, got %s", truncate(raw))
}

func readStringAs[T ~string](dec *jsontext.Decoder) (T, error) {
	s, err := readString(dec)
	return T(s), err
}

func readInt(dec *jsontext.Decoder) (int64, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return 0, err
	}
	switch tok.Kind() {
	case '0':
		n, err := tok.Int()
		if err != nil {
			return n, fmt.Errorf("want an integer: %w", err)
		}
		return n, nil
	case 'n':
		return 0, nullSoft()
	}
	return 0, fmt.Errorf("want a JSON number, got %v", tok.Kind())
}

func readIntAs[T ~int64](dec *jsontext.Decoder) (T, error) {
	n, err := readInt(dec)
	return T(n), err
}

func readUintAs[T ~uint32](dec *jsontext.Decoder) (T, error) {
	n, err := readInt(dec)
	if err != nil {
		return T(n), err
	}
	if n < 0 || n > 1<<32-1 {
		return 0, fmt.Errorf("flags %d out of the 32-bit range", n)
	}
	return T(n), nil
}

func readFloat(dec *jsontext.Decoder) (float64, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return 0, err
	}
	switch tok.Kind() {
	case '0':
		return tok.Float()
	case 'n':
		return 0, nullSoft()
	}
	return 0, fmt.Errorf("want a JSON number, got %v", tok.Kind())
}

func readBool(dec *jsontext.Decoder) (bool, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return false, err
	}
	switch tok.Kind() {
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return false, nullSoft()
	}
	return false, fmt.Errorf("want a JSON boolean, got %v", tok.Kind())
}

// readRaw returns a copy of the next value, whatever it is.
func readRaw(dec *jsontext.Decoder) (jsontext.Value, error) {
	raw, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	return raw.Clone(), nil
}

func readConst(dec *jsontext.Decoder, typ, member, want string) error {
	got, err := readString(dec)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s.%s must be %q, got %q", typ, member, want, got)
	}
	return nil
}

func readStruct[T any, P interface {
	*T
	jsonDecoder
}](dec *jsontext.Decoder) (T, error) {
	var v T
	err := P(&v).decodeJSON(dec)
	return v, err
}

// readNew decodes an optional value of a type that is not to be copied
// (see splitTypes in wiregen) straight into a new one: null gives nil.
func readNew[T any, P interface {
	*T
	jsonDecoder
}](dec *jsontext.Decoder) (*T, error) {
	if dec.PeekKind() == 'n' {
		return nil, nullOptional(dec, "")
	}
	v := new(T)
	if err := P(v).decodeJSON(dec); err != nil {
		if m, ok := err.(*MissingError); ok {
			return v, m
		}
		return nil, err
	}
	return v, nil
}

// readPtr decodes an optional value: null gives nil, and is reported as
// invalid for the strict decoder (nullOptional).
func readPtr[T any](dec *jsontext.Decoder, fn func(*jsontext.Decoder) (T, error)) (*T, error) {
	if dec.PeekKind() == 'n' {
		return nil, nullOptional(dec, "")
	}
	v, err := fn(dec)
	if err != nil {
		if m, ok := err.(*MissingError); ok {
			return &v, m
		}
		return nil, err
	}
	return &v, nil
}

// readSlice decodes an array. null gives nil and [] gives an empty,
// non-nil slice so that the two stay apart when encoded again.
func readSlice[T any](dec *jsontext.Decoder, fn func(*jsontext.Decoder) (T, error)) ([]T, error) {
	return readArray(dec, fn, true)
}

// readSliceOf is readSlice for elements of a type without null: a null
// element is reported as invalid (and kept as the zero value).
func readSliceOf[T any](dec *jsontext.Decoder, fn func(*jsontext.Decoder) (T, error)) ([]T, error) {
	return readArray(dec, fn, false)
}

func readArray[T any](dec *jsontext.Decoder, fn func(*jsontext.Decoder) (T, error), nullOK bool) ([]T, error) {
	if null, err := open(dec, '['); null || err != nil {
		return nil, err
	}
	out := []T{}
	var missing *MissingError
	for dec.PeekKind() != ']' {
		var v T
		var err error
		if !nullOK && dec.PeekKind() == 'n' {
			err = nullMember(dec, "")
		} else {
			v, err = fn(dec)
		}
		if err != nil {
			m, ok := err.(*MissingError)
			if !ok {
				return nil, &memberError{name: "[" + strconv.Itoa(len(out)) + "]", err: err}
			}
			missing = missing.merge(under("["+strconv.Itoa(len(out))+"]", m).(*MissingError))
		}
		out = append(out, v)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if missing != nil {
		return out, missing
	}
	return out, nil
}

// readMap decodes an object of values of one type.
func readMap[T any](dec *jsontext.Decoder, fn func(*jsontext.Decoder) (T, error)) (map[string]T, error) {
	return readObjectOf(dec, fn, true)
}

// readMapOf is readMap for values of a type without null.
func readMapOf[T any](dec *jsontext.Decoder, fn func(*jsontext.Decoder) (T, error)) (map[string]T, error) {
	return readObjectOf(dec, fn, false)
}

func readObjectOf[T any](dec *jsontext.Decoder, fn func(*jsontext.Decoder) (T, error), nullOK bool) (map[string]T, error) {
	if null, err := open(dec, '{'); null || err != nil {
		return nil, err
	}
	out := map[string]T{}
	var missing *MissingError
	for dec.PeekKind() != '}' {
		name, err := readName(dec)
		if err != nil {
			return nil, err
		}
		key := string(name)
		var v T
		if !nullOK && dec.PeekKind() == 'n' {
			err = nullMember(dec, "")
		} else {
			v, err = fn(dec)
		}
		if err != nil {
			m, ok := err.(*MissingError)
			if !ok {
				return nil, &memberError{name: "[" + strconv.Quote(key) + "]", err: err}
			}
			missing = missing.merge(under("["+strconv.Quote(key)+"]", m).(*MissingError))
		}
		out[key] = v
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if missing != nil {
		return out, missing
	}
	return out, nil
}

// bufferedMember is an object member read before a union's tag.
type bufferedMember struct {
	name  []byte
	value jsontext.Value
}

// decodeUnion reads an object whose variant is chosen by the string member
// tag. When the tag comes first, the rest of the object streams straight
// into the variant. Members before the tag are kept raw and replayed into
// the variant once it is known. An unknown tag yields *Unknown holding the
// object. null yields nil.
func decodeUnion(dec *jsontext.Decoder, typ, tag string, pick func([]byte) unionMember) (any, error) {
	if null, err := open(dec, '{'); null || err != nil {
		if err != nil {
			return nil, fmt.Errorf("protocol: %s: %w", typ, err)
		}
		return nil, nil
	}
	var before []bufferedMember
	for dec.PeekKind() != '}' {
		name, err := readName(dec)
		if err != nil {
			return nil, fmt.Errorf("protocol: %s: %w", typ, err)
		}
		if string(name) != tag {
			v, err := dec.ReadValue()
			if err != nil {
				return nil, fmt.Errorf("protocol: %s: %w", typ, err)
			}
			before = append(before, bufferedMember{name: slices.Clone(name), value: v.Clone()})
			continue
		}
		rawTag, err := dec.ReadValue()
		if err != nil {
			return nil, memberErr(typ, tag, err)
		}
		if len(rawTag) == 0 || rawTag[0] != '"' {
			return nil, fmt.Errorf("protocol: %s.%s: want a string, got %s", typ, tag, truncate(rawTag))
		}
		tagValue, err := unquote(rawTag)
		if err != nil {
			return nil, err
		}
		v := pick(tagValue)
		if v == nil {
			return readUnknown(dec, string(tagValue), tag, rawTag.Clone(), before)
		}
		v.setTag(tagValue)
		var seen uint64
		var missing *MissingError
		keep := func(bit uint64, err error) bool {
			seen |= bit
			if m, ok := err.(*MissingError); ok {
				missing = missing.merge(m)
				return true
			}
			return err == nil
		}
		for _, m := range before {
			if bit, err := decodeMemberFrom(v, m); !keep(bit, err) {
				return nil, memberErr(typ, string(m.name), err)
			}
		}
		for dec.PeekKind() != '}' {
			name, err := readName(dec)
			if err != nil {
				return nil, fmt.Errorf("protocol: %s: %w", typ, err)
			}
			if bit, err := v.decodeMember(dec, name); !keep(bit, err) {
				return nil, memberErr(typ, string(name), err)
			}
		}
		if _, err = dec.ReadToken(); err != nil {
			return nil, err
		}
		return v, checkRequired(missing, v.required(), seen)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("protocol: %s: missing %q member", typ, tag)
}

// decodeMemberFrom decodes one buffered member into v.
func decodeMemberFrom(v memberDecoder, m bufferedMember) (seen uint64, err error) {
	err = unmarshalWith(m.value, func(dec *jsontext.Decoder) (err error) {
		seen, err = v.decodeMember(dec, m.name)
		return err
	})
	// The member's own error, not the library's wrapping of it.
	var se *json.SemanticError
	if errors.As(err, &se) && se.Err != nil {
		err = se.Err
	}
	return seen, err
}

// readUnknown finishes reading an object with an unknown tag, rebuilding it
// member by member from the raw input so it encodes again unchanged (apart
// from whitespace between members).
func readUnknown(dec *jsontext.Decoder, tagValue, tag string, rawTag jsontext.Value, before []bufferedMember) (any, error) {
	buf := []byte{'{'}
	appendMember := func(name []byte, value []byte) {
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf, _ = jsontext.AppendQuote(buf, name)
		buf = append(buf, ':')
		buf = append(buf, value...)
	}
	for _, m := range before {
		appendMember(m.name, m.value)
	}
	appendMember([]byte(tag), rawTag)
	for dec.PeekKind() != '}' {
		name, err := readName(dec)
		if err != nil {
			return nil, err
		}
		name = slices.Clone(name)
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		appendMember(name, v)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	buf = append(buf, '}')
	return &Unknown{Tag: tagValue, Raw: jsontext.Value(buf)}, nil
}

func truncate(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// Encoding.

// member writes one object member, name then value, unless an earlier
// write failed; the first error stays in *err.
func member[T any](enc *jsontext.Encoder, err *error, name string, v T, write func(*jsontext.Encoder, T) error) {
	if *err != nil {
		return
	}
	if *err = writeName(enc, name); *err == nil {
		*err = write(enc, v)
	}
}

func writeNull(enc *jsontext.Encoder, _ struct{}) error {
	return enc.WriteToken(jsontext.Null)
}

func writeName(enc *jsontext.Encoder, name string) error {
	return enc.WriteToken(jsontext.String(name))
}

func writeString(enc *jsontext.Encoder, s string) error {
	return enc.WriteToken(jsontext.String(s))
}

func writeStringAs[T ~string](enc *jsontext.Encoder, s T) error {
	return enc.WriteToken(jsontext.String(string(s)))
}

func writeInt(enc *jsontext.Encoder, n int64) error {
	return enc.WriteToken(jsontext.Int(n))
}

//lint:ignore U1000 wiregen emits calls to it for integer types named in the schema, which the current schemas have none of.
func writeIntAs[T ~int64](enc *jsontext.Encoder, n T) error {
	return enc.WriteToken(jsontext.Int(int64(n)))
}

func writeUintAs[T ~uint32](enc *jsontext.Encoder, n T) error {
	return enc.WriteToken(jsontext.Uint(uint64(n)))
}

func writeFloat(enc *jsontext.Encoder, f float64) error {
	return enc.WriteToken(jsontext.Float(f))
}

func writeBool(enc *jsontext.Encoder, b bool) error {
	return enc.WriteToken(jsontext.Bool(b))
}

// writeRaw writes a raw value; an empty one is written as null.
func writeRaw(enc *jsontext.Encoder, v jsontext.Value) error {
	if len(v) == 0 {
		return enc.WriteToken(jsontext.Null)
	}
	return enc.WriteValue(v)
}

func writeMarshaler[T marshaler](enc *jsontext.Encoder, v T) error {
	return v.MarshalJSONTo(enc)
}

// writeUnion writes a union value; nil is written as null.
func writeUnion[T marshaler](enc *jsontext.Encoder, v T) error {
	if any(v) == nil {
		return enc.WriteToken(jsontext.Null)
	}
	return v.MarshalJSONTo(enc)
}

// writeSlice writes an array; nil is written as [] because slices are only
// written when present.
func writeSlice[T any](enc *jsontext.Encoder, s []T, fn func(*jsontext.Encoder, T) error) error {
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	for _, v := range s {
		if err := fn(enc, v); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndArray)
}

// writeMap writes an object with its keys sorted, so output is stable.
func writeMap[T any](enc *jsontext.Encoder, m map[string]T, fn func(*jsontext.Encoder, T) error) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := writeName(enc, k); err != nil {
			return err
		}
		if err := fn(enc, m[k]); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// Unknown is a union value whose tag this package does not know, for
// example an action type from a newer protocol version. It keeps the object
// as it was received and encodes it again unchanged, so a reducer can skip
// it and a relay can pass it on.
type Unknown struct {
	// Tag is the value of the union's tag member ("type", "kind", ...).
	Tag string
	// Raw is the whole JSON object.
	Raw jsontext.Value
}

// Type reports the tag of an unknown value.
func (u *Unknown) Type() string { return u.Tag }

// Kind reports the tag of an unknown value.
func (u *Unknown) Kind() string { return u.Tag }

// Status reports the tag of an unknown value.
func (u *Unknown) Status() string { return u.Tag }

// State reports the tag of an unknown value.
func (u *Unknown) State() string { return u.Tag }

// MarshalJSONTo writes the object as received.
func (u Unknown) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(u.Raw)
}

// Ptr returns a pointer to v, for filling optional fields.
func Ptr[T any](v T) *T { return &v }

var _ = strconv.Itoa

// errContextual reports a member whose type is chosen by its context and
// which the enclosing type's decoder should have handled itself.
func errContextual(typ, member string) error {
	return fmt.Errorf("protocol: %s.%s: type depends on context and cannot be decoded alone", typ, member)
}
