package protocol

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// This file holds the wire types the generator leaves to hand-written code:
// the schema's undiscriminated unions of primitives, and Snapshot, whose
// state is chosen by its resource URI.

// StringOrMarkdown is the schema definition StringOrMarkdown: plain text, or
// text to be rendered as Markdown. On the wire plain text is a bare string
// and Markdown is {"markdown": "..."}.
type StringOrMarkdown struct {
	Text     string
	Markdown bool
}

// PlainText returns a StringOrMarkdown holding plain text.
func PlainText(s string) StringOrMarkdown { return StringOrMarkdown{Text: s} }

// MarkdownText returns a StringOrMarkdown holding Markdown.
func MarkdownText(s string) StringOrMarkdown { return StringOrMarkdown{Text: s, Markdown: true} }

// String returns the text, Markdown or not.
func (s StringOrMarkdown) String() string { return s.Text }

// MarshalJSONTo writes a bare string or a {"markdown"} object.
func (s StringOrMarkdown) MarshalJSONTo(enc *jsontext.Encoder) error {
	if !s.Markdown {
		return writeString(enc, s.Text)
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	if err := writeName(enc, "markdown"); err != nil {
		return err
	}
	if err := writeString(enc, s.Text); err != nil {
		return err
	}
	return enc.WriteToken(jsontext.EndObject)
}

// UnmarshalJSONFrom reads a bare string or a {"markdown"} object.
func (s *StringOrMarkdown) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return lenient(s.decodeJSON(dec))
}

func (s *StringOrMarkdown) decodeJSON(dec *jsontext.Decoder) error {
	*s = StringOrMarkdown{}
	if dec.PeekKind() == '"' {
		t, err := readString(dec)
		s.Text = t
		return err
	}
	s.Markdown = true
	return decodeObject(dec, "StringOrMarkdown", memberFunc(func(dec *jsontext.Decoder, name []byte) (err error) {
		if string(name) == "markdown" {
			s.Text, err = readString(dec)
			return err
		}
		return dec.SkipValue()
	}))
}

// memberFunc adapts a function to memberDecoder, for objects without
// required members.
type memberFunc func(dec *jsontext.Decoder, name []byte) error

func (f memberFunc) decodeMember(dec *jsontext.Decoder, name []byte) (uint64, error) {
	return 0, f(dec, name)
}

func (f memberFunc) required() *requiredMembers { return nil }

// JSONPrimitive is the schema definition JSONPrimitive: a JSON string,
// number, boolean or null, kept as its JSON text.
type JSONPrimitive jsontext.Value

// MarshalJSONTo writes the value; an empty one is null.
func (p JSONPrimitive) MarshalJSONTo(enc *jsontext.Encoder) error {
	return writeRaw(enc, jsontext.Value(p))
}

// UnmarshalJSONFrom reads a primitive and refuses objects and arrays.
func (p *JSONPrimitive) UnmarshalJSONFrom(dec *jsontext.Decoder) error { return p.decodeJSON(dec) }

func (p *JSONPrimitive) decodeJSON(dec *jsontext.Decoder) error {
	switch k := dec.PeekKind(); k {
	case '{', '[':
		if err := dec.SkipValue(); err != nil {
			return err
		}
		return fmt.Errorf("protocol: JSONPrimitive: want a string, number, boolean or null, got %v", k)
	}
	v, err := readRaw(dec)
	*p = JSONPrimitive(v)
	return err
}

// ToolInput is the schema definition ToolInput: tool input given inline as
// a string, or by reference as a ContentRef. Exactly one is set.
type ToolInput struct {
	Inline *string
	Ref    *ContentRef
}

// InlineToolInput returns a ToolInput holding s.
func InlineToolInput(s string) ToolInput { return ToolInput{Inline: &s} }

// MarshalJSONTo writes the string or the reference; an empty ToolInput is
// written as "".
func (t ToolInput) MarshalJSONTo(enc *jsontext.Encoder) error {
	if t.Ref != nil {
		return t.Ref.MarshalJSONTo(enc)
	}
	if t.Inline != nil {
		return writeString(enc, *t.Inline)
	}
	return writeString(enc, "")
}

// UnmarshalJSONFrom reads a string or a ContentRef object.
func (t *ToolInput) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return lenient(t.decodeJSON(dec))
}

func (t *ToolInput) decodeJSON(dec *jsontext.Decoder) error {
	*t = ToolInput{}
	if dec.PeekKind() == '"' {
		s, err := readString(dec)
		t.Inline = &s
		return err
	}
	t.Ref = new(ContentRef)
	return t.Ref.decodeJSON(dec)
}

// UnmarshalJSONFrom reads a Snapshot, choosing the Go type of its state from
// the kind of its resource URI. A state with a resource this package does not
// recognise is kept as *RawState.
func (x *Snapshot) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return lenient(x.decodeJSON(dec))
}

// snapshotDecoder decodes a Snapshot's members, holding its state back
// until the resource is known.
type snapshotDecoder struct {
	x       *Snapshot
	pending jsontext.Value
}

func (d *snapshotDecoder) required() *requiredMembers { return d.x.required() }

func (d *snapshotDecoder) decodeMember(dec *jsontext.Decoder, name []byte) (uint64, error) {
	if string(name) != "state" {
		return d.x.decodeMember(dec, name)
	}
	bit, _ := d.x.decodeMemberBit("state")
	if d.x.Resource == "" {
		raw, err := readRaw(dec)
		d.pending = raw
		return bit, err
	}
	st, err := decodeSnapshotState(dec, d.x.Resource)
	d.x.State = st
	return bit, under("state", err)
}

// decodeMemberBit reports the required bit of a Snapshot member.
func (x *Snapshot) decodeMemberBit(member string) (uint64, bool) {
	i := slices.Index(*x.required(), member)
	if i < 0 {
		return 0, false
	}
	return 1 << i, true
}

func (x *Snapshot) decodeJSON(dec *jsontext.Decoder) error {
	*x = Snapshot{}
	d := &snapshotDecoder{x: x}
	err := decodeObject(dec, "Snapshot", d)
	if d.pending == nil {
		return err
	}
	if _, ok := err.(*MissingError); err != nil && !ok {
		return err
	}
	err2 := unmarshalWith(d.pending, func(dec *jsontext.Decoder) (err error) {
		x.State, err = decodeSnapshotState(dec, x.Resource)
		return under("state", err)
	})
	if m2, ok := err2.(*MissingError); ok {
		if m, ok := err.(*MissingError); ok {
			return m.merge(m2)
		}
		return m2
	}
	if err2 != nil {
		return err2
	}
	return err
}

// NewSnapshotState returns an empty state value of the Go type that holds
// the state of the channel at uri, or nil when the channel kind is unknown.
//
// Every AHP channel but a session has a scheme of AHP's (ahp-*), and
// clients name sessions as they like, so any other absolute URI holds a
// session.
func NewSnapshotState(uri string) SnapshotState {
	ch, err := ParseChannel(uri)
	if err != nil {
		if scheme, _, ok := SplitScheme(uri); ok && errors.Is(err, ErrUnknownChannelScheme) && !ReservedScheme(scheme) && CheckURI(uri) == nil {
			return new(SessionState)
		}
		return nil
	}
	switch ch.Kind {
	case ChannelRoot:
		return new(RootState)
	case ChannelSession:
		return new(SessionState)
	case ChannelChat:
		return new(ChatState)
	case ChannelTerminal:
		return new(TerminalState)
	case ChannelChangeset:
		return new(ChangesetState)
	case ChannelAnnotations:
		return new(AnnotationsState)
	case ChannelResourceWatch:
		return new(ResourceWatchState)
	case ChannelCanvas:
		return new(CanvasState)
	case ChannelAutomation:
		return new(AutomationState)
	case ChannelAutomationRun:
		return new(AutomationRunState)
	}
	return nil
}

func decodeSnapshotState(dec *jsontext.Decoder, resource string) (SnapshotState, error) {
	st := NewSnapshotState(resource)
	if st == nil {
		raw, err := readRaw(dec)
		if err != nil {
			return nil, err
		}
		return &RawState{Raw: raw}, nil
	}
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return nil, err
	}
	return st, st.(jsonDecoder).decodeJSON(dec)
}

// RawState is the state of a snapshot whose channel kind this package does
// not know; it is kept as received.
type RawState struct {
	Raw jsontext.Value
}

func (*RawState) isSnapshotState() {}

// MarshalJSONTo writes the state as received.
func (s RawState) MarshalJSONTo(enc *jsontext.Encoder) error {
	return writeRaw(enc, s.Raw)
}

// PartialSessionSummary is a SessionSummary with every member optional, as
// carried by root/sessionSummaryChanged: an absent member is unchanged.
type PartialSessionSummary = SessionSummaryChangedParamsChanges

// handTypes extends the generated registry of Decode with the hand-written
// wire types.
var handTypes = map[string]func(dec *jsontext.Decoder) (any, error){
	"StringOrMarkdown": func(dec *jsontext.Decoder) (any, error) {
		v, err := readStruct[StringOrMarkdown](dec)
		return &v, err
	},
	"JSONPrimitive": func(dec *jsontext.Decoder) (any, error) {
		v, err := readStruct[JSONPrimitive](dec)
		return &v, err
	},
	"ToolInput": func(dec *jsontext.Decoder) (any, error) {
		v, err := readStruct[ToolInput](dec)
		return &v, err
	},
	"PartialSessionSummary": func(dec *jsontext.Decoder) (any, error) {
		v, err := readStruct[PartialSessionSummary](dec)
		return &v, err
	},
}
