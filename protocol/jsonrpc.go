// The JSON-RPC 2.0 envelope. The AHP schema describes what travels inside
// params and result; the envelope around it is plain JSON-RPC 2.0 and is
// written by hand here rather than generated.

package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// ErrorCode is the code of a JSON-RPC error: one of the standard JSON-RPC
// codes or of the AHP codes, both generated from the schema
// ([JSONRPCErrorCode] and [AHPErrorCode] are aliases of it, and their
// constants are CodeParseError ... CodeConflict), or any other integer a peer
// sends.
type ErrorCode int64

// An ID identifies a request and the response to it. It holds an integer or
// a string and remembers which, so that an ID read from the wire is written
// back exactly as it arrived: 7 and "7" are different IDs.
//
// The zero ID is absent. A notification has none, and an error response about
// a message whose ID could not be read carries it as null.
//
// IDs are comparable and may be used as map keys.
type ID struct {
	str  string
	num  int64
	kind rpcIDKind
}

type rpcIDKind uint8

const (
	rpcIDAbsent rpcIDKind = iota
	rpcIDNumber
	rpcIDString
)

// Int64ID returns the numeric ID n.
func Int64ID(n int64) ID { return ID{num: n, kind: rpcIDNumber} }

// StringID returns the string ID s.
func StringID(s string) ID { return ID{str: s, kind: rpcIDString} }

// IsValid reports whether id is present, that is, not the zero ID.
func (id ID) IsValid() bool { return id.kind != rpcIDAbsent }

// Raw returns the value of id: an int64, a string, or nil for the zero ID.
func (id ID) Raw() any {
	switch id.kind {
	case rpcIDNumber:
		return id.num
	case rpcIDString:
		return id.str
	}
	return nil
}

// String returns id as JSON text: 7, "seven", or null.
func (id ID) String() string {
	b, _ := id.appendJSON(nil)
	return string(b)
}

// MarshalJSON encodes id as a JSON number or string, or null when absent.
func (id ID) MarshalJSON() ([]byte, error) { return id.appendJSON(nil) }

// UnmarshalJSON decodes a JSON integer, string or null (the zero ID). Numbers
// must be integers that fit in an int64 and are kept exactly.
func (id *ID) UnmarshalJSON(data []byte) error {
	v := jsontext.Value(data)
	if !v.IsValid() {
		return errors.New("protocol: invalid JSON for an ID")
	}
	switch v.Kind() {
	case jsontext.KindNull:
		*id = ID{}
	case jsontext.KindString:
		s, err := jsontext.AppendUnquote(nil, v)
		if err != nil {
			return err
		}
		*id = StringID(string(s))
	case jsontext.KindNumber:
		n, ok := rpcParseInt(v)
		if !ok {
			return fmt.Errorf("protocol: ID %s is not an int64", v)
		}
		*id = Int64ID(n)
	default:
		return fmt.Errorf("protocol: an ID must be a number or a string, not %s", v.Kind())
	}
	return nil
}

func (id ID) appendJSON(b []byte) ([]byte, error) {
	switch id.kind {
	case rpcIDNumber:
		return strconv.AppendInt(b, id.num, 10), nil
	case rpcIDString:
		return jsontext.AppendQuote(b, id.str)
	}
	return append(b, "null"...), nil
}

// A Request is a call that expects a [Response] carrying the same ID.
//
// Params holds the encoded parameters; nil means the message has no params
// member, which is different from an empty object. Params must hold valid
// JSON when set.
type Request struct {
	ID     ID
	Method string
	Params jsontext.Value
}

// A Notification is a one-way message: it has no ID and gets no response.
// Params is as for [Request].
type Notification struct {
	Method string
	Params jsontext.Value
}

// A Response answers the [Request] with the same ID. It reports success with
// Result when Error is nil, and failure otherwise, in which case Result is
// ignored.
//
// A nil Result encodes as null, which is a valid result. A zero ID encodes
// as null; only an error response may carry it.
type Response struct {
	ID     ID
	Result jsontext.Value
	Error  *Error
}

// Error is the error object of a failed [Response]. It implements the error
// interface, so handlers can return one to choose the code the peer sees,
// and callers can recover it with [errors.As].
//
// Two Errors match under [errors.Is] when their codes are equal, so
// errors.Is(err, &Error{Code: CodeMethodNotFound}) tests for a code.
type Error struct {
	Code    ErrorCode      `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data,omitzero"` // optional details, nil when absent
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "jsonrpc error " + strconv.FormatInt(int64(e.Code), 10)
	}
	return e.Message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == e.Code
}

// MarshalJSON encodes r as a JSON-RPC request. It fails when r has no ID.
func (r Request) MarshalJSON() ([]byte, error) {
	if !r.ID.IsValid() {
		return nil, errors.New("protocol: a request needs an ID")
	}
	b := make([]byte, 0, 48+len(r.Method)+len(r.Params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b, err := r.ID.appendJSON(b)
	if err != nil {
		return nil, err
	}
	return rpcAppendCall(b, r.Method, r.Params)
}

// MarshalJSON encodes n as a JSON-RPC notification.
func (n Notification) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 40+len(n.Method)+len(n.Params))
	b = append(b, `{"jsonrpc":"2.0"`...)
	return rpcAppendCall(b, n.Method, n.Params)
}

func rpcAppendCall(b []byte, method string, params jsontext.Value) ([]byte, error) {
	b = append(b, `,"method":`...)
	b, err := jsontext.AppendQuote(b, method)
	if err != nil {
		return nil, err
	}
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}'), nil
}

// MarshalJSON encodes r as a JSON-RPC success or error response.
func (r Response) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 48+len(r.Result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b, err := r.ID.appendJSON(b)
	if err != nil {
		return nil, err
	}
	if r.Error != nil {
		b = append(b, `,"error":{"code":`...)
		b = strconv.AppendInt(b, int64(r.Error.Code), 10)
		b = append(b, `,"message":`...)
		if b, err = jsontext.AppendQuote(b, r.Error.Message); err != nil {
			return nil, err
		}
		if len(r.Error.Data) > 0 {
			// Data is the one raw value usually built by hand, so check it.
			if !r.Error.Data.IsValid() {
				return nil, errors.New("protocol: error data is not valid JSON")
			}
			b = append(b, `,"data":`...)
			b = append(b, r.Error.Data...)
		}
		b = append(b, '}')
	} else if r.ID.IsValid() {
		b = append(b, `,"result":`...)
		if len(r.Result) == 0 {
			b = append(b, "null"...)
		} else {
			b = append(b, r.Result...)
		}
	} else {
		return nil, errors.New("protocol: a success response needs an ID")
	}
	return append(b, '}'), nil
}

// UnmarshalJSON decodes a JSON-RPC request; any other message is an error.
func (r *Request) UnmarshalJSON(data []byte) error {
	m, err := DecodeMessage(bytes.Clone(data))
	if err == nil && m.Request == nil {
		err = errors.New("protocol: message is not a request")
	}
	if err != nil {
		return err
	}
	*r = *m.Request
	return nil
}

// UnmarshalJSON decodes a JSON-RPC notification; any other message is an error.
func (n *Notification) UnmarshalJSON(data []byte) error {
	m, err := DecodeMessage(bytes.Clone(data))
	if err == nil && m.Notification == nil {
		err = errors.New("protocol: message is not a notification")
	}
	if err != nil {
		return err
	}
	*n = *m.Notification
	return nil
}

// UnmarshalJSON decodes a JSON-RPC response; any other message is an error.
func (r *Response) UnmarshalJSON(data []byte) error {
	m, err := DecodeMessage(bytes.Clone(data))
	if err == nil && m.Response == nil {
		err = errors.New("protocol: message is not a response")
	}
	if err != nil {
		return err
	}
	*r = *m.Response
	return nil
}

// A JSONRPCMessage holds any one JSON-RPC 2.0 message. Exactly one of its
// fields is set; which one tells the kind of message.
type JSONRPCMessage struct {
	Request      *Request
	Notification *Notification
	Response     *Response
}

// MarshalJSON encodes the message held by m. It fails unless exactly one
// field is set.
func (m JSONRPCMessage) MarshalJSON() ([]byte, error) {
	switch {
	case m.Request != nil && m.Notification == nil && m.Response == nil:
		return m.Request.MarshalJSON()
	case m.Request == nil && m.Notification != nil && m.Response == nil:
		return m.Notification.MarshalJSON()
	case m.Request == nil && m.Notification == nil && m.Response != nil:
		return m.Response.MarshalJSON()
	}
	return nil, errors.New("protocol: a JSONRPCMessage must hold exactly one message")
}

// UnmarshalJSON decodes data as [DecodeMessage] does, keeping a copy of it.
func (m *JSONRPCMessage) UnmarshalJSON(data []byte) error {
	d, err := DecodeMessage(bytes.Clone(data))
	if err != nil {
		return err
	}
	*m = d
	return nil
}

// DecodeMessage decodes one JSON-RPC 2.0 message and tells its kind: a member
// "method" with an "id" makes a request, without one a notification; no
// "method" makes a response, which must carry exactly one of "result" and
// "error".
//
// Decoding is a single strict pass. Member names match case-sensitively and
// may not repeat, "jsonrpc" must be "2.0", numeric IDs must be integers that
// fit in an int64, params must be an object, an array or null, and unknown
// members are ignored. Batches (JSON arrays) are not supported.
//
// Params and Result in the returned message are slices of data, so data must
// not be modified while they are in use.
//
// A failure is always an [*Error] whose code is [CodeParseError] when data is
// not valid JSON and [CodeInvalidRequest] when it is valid JSON but not a
// valid message; it can be sent back to the peer as it is.
func DecodeMessage(data []byte) (JSONRPCMessage, error) {
	if m, ok := fastNotification(data); ok {
		return m, nil
	}
	m, _, err := rpcDecodePooled(data, nil)
	return m, err
}

// DecodeMessageWith is DecodeMessage that also decodes the params of
// chosen methods in the same pass. When a request or notification names
// its method before its params (as every encoder in this module writes
// them) and paramsFor(method) returns a non-nil pointer to a type with an
// UnmarshalJSONFrom method, the params are decoded straight into it and it
// is returned as decoded. Params still holds the raw bytes. When those
// params fail to decode, or come before the method, decoded is nil and
// the message is returned as DecodeMessage would.
//
// A client uses it for "action" notifications, the bulk of what a host
// sends, so that each is read once instead of twice. The streamed ones
// (chat/delta, chat/reasoning, terminal/data) in their common shape take a
// fast path that reads them as the general decoder would, at a fraction
// of the cost; their strings share one copy of data.
func DecodeMessageWith(data []byte, paramsFor func(method string) any) (JSONRPCMessage, any, error) {
	if paramsFor != nil {
		if m, decoded, ok := fastActionNotification(data, paramsFor); ok {
			return m, decoded, nil
		}
	}
	m, decoded, err := rpcDecodePooled(data, paramsFor)
	if err != nil && decoded == errParamsDecode {
		m, err = DecodeMessage(data)
		return m, nil, err
	}
	return m, decoded, err
}

// errParamsDecode marks a failure inside early-decoded params.
var errParamsDecode = &struct{ error }{}

func rpcDecodePooled(data []byte, paramsFor func(string) any) (JSONRPCMessage, any, error) {
	d := rpcDecoders.Get().(*jsontext.Decoder)
	d.Reset(bytes.NewBuffer(data))
	m, decoded, err := rpcDecode(d, data, paramsFor)
	d.Reset(rpcEOF{}) // drop the reference to data before pooling
	rpcDecoders.Put(d)
	if err != nil {
		if decoded == errParamsDecode {
			return JSONRPCMessage{}, decoded, err
		}
		return JSONRPCMessage{}, nil, rpcClassify(data, err)
	}
	return m, decoded, nil
}

var rpcDecoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

type rpcEOF struct{}

func (rpcEOF) Read([]byte) (int, error) { return 0, io.EOF }

// An rpcShapeError reports syntactically valid JSON that is not a valid message.
type rpcShapeError string

func (e rpcShapeError) Error() string { return string(e) }

// rpcClassify turns a decoding failure into the error object to report.
func rpcClassify(data []byte, err error) *Error {
	var shape rpcShapeError
	switch {
	case errors.As(err, &shape):
		// The pass stopped early; the rest of the input may still be broken.
		if !jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true)) {
			return &Error{Code: CodeParseError, Message: "parse error: invalid JSON"}
		}
		return &Error{Code: CodeInvalidRequest, Message: "invalid message: " + string(shape)}
	case errors.Is(err, jsontext.ErrDuplicateName):
		return &Error{Code: CodeInvalidRequest, Message: "invalid message: " + err.Error()}
	}
	return &Error{Code: CodeParseError, Message: "parse error: " + err.Error()}
}

func rpcDecode(d *jsontext.Decoder, data []byte, paramsFor func(string) any) (JSONRPCMessage, any, error) {
	m, decoded, err := rpcDecodeMessage(d, data, paramsFor)
	return m, decoded, err
}

func rpcDecodeMessage(d *jsontext.Decoder, data []byte, paramsFor func(string) any) (msg JSONRPCMessage, decoded any, err error) {
	var (
		hasVersion, hasID, nullID, hasMethod, hasParams, hasResult bool

		id     ID
		method string
		params jsontext.Value
		result jsontext.Value
		rpcErr *Error
	)
	tok, err := d.ReadToken()
	if err != nil {
		return JSONRPCMessage{}, decoded, err
	}
	if tok.Kind() != jsontext.KindBeginObject {
		return JSONRPCMessage{}, nil, rpcShapeError("a message must be a JSON object")
	}
	for d.PeekKind() != jsontext.KindEndObject {
		name, err := d.ReadToken()
		if err != nil {
			return JSONRPCMessage{}, decoded, err
		}
		switch name.String() {
		case "jsonrpc":
			if d.PeekKind() != jsontext.KindString {
				return JSONRPCMessage{}, nil, rpcSkipOr(d, rpcShapeError(`"jsonrpc" must be "2.0"`))
			}
			v, err := d.ReadToken()
			if err != nil {
				return JSONRPCMessage{}, decoded, err
			}
			if v.String() != "2.0" {
				return JSONRPCMessage{}, nil, rpcShapeError(`"jsonrpc" must be "2.0"`)
			}
			hasVersion = true
		case "id":
			hasID = true
			id, err = rpcReadID(d)
			nullID = err == nil && !id.IsValid()
		case "method":
			if d.PeekKind() != jsontext.KindString {
				return JSONRPCMessage{}, nil, rpcSkipOr(d, rpcShapeError(`"method" must be a string`))
			}
			v, err := d.ReadToken()
			if err != nil {
				return JSONRPCMessage{}, decoded, err
			}
			method, hasMethod = v.String(), true
		case "params":
			switch d.PeekKind() {
			case jsontext.KindBeginObject, jsontext.KindBeginArray, jsontext.KindNull:
				hasParams = true
				if hasMethod && paramsFor != nil {
					if u, ok := paramsFor(method).(interface {
						UnmarshalJSONFrom(*jsontext.Decoder) error
					}); ok && u != nil {
						start := d.InputOffset()
						if err := u.UnmarshalJSONFrom(d); err != nil {
							return JSONRPCMessage{}, errParamsDecode, err
						}
						params = rpcTrimValue(data[start:d.InputOffset()])
						decoded = u
						break
					}
				}
				params, err = rpcReadRaw(d, data)
			default:
				err = rpcSkipOr(d, rpcShapeError(`"params" must be an object or an array`))
			}
		case "result":
			result, err = rpcReadRaw(d, data)
			hasResult = true
		case "error":
			rpcErr, err = rpcReadError(d, data)
		default:
			err = d.SkipValue()
		}
		if err != nil {
			return JSONRPCMessage{}, decoded, err
		}
	}
	if _, err := d.ReadToken(); err != nil { // the closing brace
		return JSONRPCMessage{}, decoded, err
	}
	if _, err := d.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after the message")
		}
		return JSONRPCMessage{}, decoded, err
	}

	hasError := rpcErr != nil
	switch {
	case !hasVersion:
		return JSONRPCMessage{}, nil, rpcShapeError(`missing "jsonrpc": "2.0"`)
	case hasMethod && (hasResult || hasError):
		return JSONRPCMessage{}, nil, rpcShapeError(`a message with "method" cannot carry "result" or "error"`)
	case hasMethod && nullID:
		return JSONRPCMessage{}, nil, rpcShapeError(`a request ID must be a number or a string`)
	case hasMethod && hasID:
		return JSONRPCMessage{Request: &Request{ID: id, Method: method, Params: params}}, decoded, nil
	case hasMethod:
		return JSONRPCMessage{Notification: &Notification{Method: method, Params: params}}, decoded, nil
	case hasParams:
		return JSONRPCMessage{}, nil, rpcShapeError(`"params" without "method"`)
	case hasResult == hasError:
		return JSONRPCMessage{}, nil, rpcShapeError(`need "method", or exactly one of "result" and "error"`)
	case !hasID:
		return JSONRPCMessage{}, nil, rpcShapeError(`a response needs an "id"`)
	case hasResult && nullID:
		return JSONRPCMessage{}, nil, rpcShapeError(`a success response needs a non-null "id"`)
	}
	return JSONRPCMessage{Response: &Response{ID: id, Result: result, Error: rpcErr}}, decoded, nil
}

// rpcTrimValue strips the colon and whitespace in front of a value read
// from just after its member name.
func rpcTrimValue(b []byte) jsontext.Value {
	b = bytes.TrimLeft(b, " \t\r\n:")
	return jsontext.Value(b[:len(b):len(b)])
}

// rpcSkipOr consumes the next value and returns shape, unless the value is not
// valid JSON, in which case it returns the syntax error.
func rpcSkipOr(d *jsontext.Decoder, shape rpcShapeError) error {
	if err := d.SkipValue(); err != nil {
		return err
	}
	return shape
}

// rpcReadRaw reads the next value and returns it as a slice of data, so that
// it stays valid after the decoder moves on.
func rpcReadRaw(d *jsontext.Decoder, data []byte) (jsontext.Value, error) {
	v, err := d.ReadValue()
	if err != nil {
		return nil, err
	}
	end := d.InputOffset()
	start := end - int64(len(v))
	return jsontext.Value(data[start:end:end]), nil
}

// rpcReadID reads an ID member value; null gives the zero ID.
func rpcReadID(d *jsontext.Decoder) (ID, error) {
	switch d.PeekKind() {
	case jsontext.KindString:
		tok, err := d.ReadToken()
		if err != nil {
			return ID{}, err
		}
		return StringID(tok.String()), nil
	case jsontext.KindNumber:
		v, err := d.ReadValue()
		if err != nil {
			return ID{}, err
		}
		n, ok := rpcParseInt(v)
		if !ok {
			return ID{}, rpcShapeError(`a numeric "id" must be an integer that fits in 64 bits`)
		}
		return Int64ID(n), nil
	case jsontext.KindNull:
		_, err := d.ReadToken()
		return ID{}, err
	}
	return ID{}, rpcSkipOr(d, rpcShapeError(`"id" must be a number or a string`))
}

// rpcReadError reads the error object of a response.
func rpcReadError(d *jsontext.Decoder, data []byte) (*Error, error) {
	if d.PeekKind() != jsontext.KindBeginObject {
		return nil, rpcSkipOr(d, rpcShapeError(`"error" must be an object`))
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, err
	}
	var (
		e               Error
		hasCode, hasMsg bool
	)
	for d.PeekKind() != jsontext.KindEndObject {
		name, err := d.ReadToken()
		if err != nil {
			return nil, err
		}
		switch name.String() {
		case "code":
			if d.PeekKind() != jsontext.KindNumber {
				return nil, rpcSkipOr(d, rpcShapeError(`error "code" must be an integer`))
			}
			v, err := d.ReadValue()
			if err != nil {
				return nil, err
			}
			n, ok := rpcParseInt(v)
			if !ok {
				return nil, rpcShapeError(`error "code" must be an integer`)
			}
			e.Code, hasCode = ErrorCode(n), true
		case "message":
			if d.PeekKind() != jsontext.KindString {
				return nil, rpcSkipOr(d, rpcShapeError(`error "message" must be a string`))
			}
			tok, err := d.ReadToken()
			if err != nil {
				return nil, err
			}
			e.Message, hasMsg = tok.String(), true
		case "data":
			e.Data, err = rpcReadRaw(d, data)
		default:
			err = d.SkipValue()
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, err
	}
	if !hasCode || !hasMsg {
		return nil, rpcShapeError(`an error object needs "code" and "message"`)
	}
	return &e, nil
}

// rpcParseInt parses a JSON number that must be an integer within int64 range.
// Fractions and exponents are refused even when the value is whole.
func rpcParseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	const cutoff = 1 << 63 // magnitude of the most negative int64
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > cutoff/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > cutoff {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // wraps correctly for u == cutoff
	}
	if u > cutoff-1 {
		return 0, false
	}
	return int64(u), true
}
