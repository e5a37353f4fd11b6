package workspace

import (
	"bytes"
	"context"
	"encoding/base64"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/changeset"
	"github.com/ahp-go/ahp/workspace/files"
)

// RangeMetaKey is the _meta key of a ranged resourceRead. The request
// carries {"offset": N, "length": M} (length 0 or absent: up to the read
// limit); the result's _meta carries {"offset", "length", "size", "eof"}
// under the same key, so a client can page through a file of any size with
// bounded memory on both sides. Without it a read returns the whole file,
// refused when the file is over the read limit.
const RangeMetaKey = "ahp-go/range"

type readRange struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length,omitempty"`
}

type rangeInfo struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
	Size   int64 `json:"size"`
	EOF    bool  `json:"eof"`
}

// resourceRead answers with ResourceReadResult, plus the range _meta for a
// ranged read, encoded here in one buffer that becomes the response
// (jsonrpc.EncodedWithRoom): the file's bytes go from a pooled page buffer
// straight into the result as base64 or as a JSON string, with no string
// or whole-page copy in between.
func resourceRead(ctx context.Context, w *Workspace, c host.Client, p *protocol.ResourceReadParams) (*jsonrpc.EncodedWithRoom, error) {
	var r files.Range
	var asked *readRange
	if raw, ok := p.Meta[RangeMetaKey]; ok {
		var rr readRange
		if err := protocol.Unmarshal(raw, &rr); err != nil {
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "resourceRead: _meta[" + RangeMetaKey + "]: " + err.Error()}
		}
		r = files.Range{Set: true, Offset: rr.Offset, Length: rr.Length}
		asked = &rr
	}
	if changeset.IsContentURI(p.URI) {
		return readChangesetContent(ctx, w, p, asked)
	}
	content, err := w.files.Read(ctx, w.scope(c), p.URI, r)
	if err != nil {
		return nil, wireError("resourceRead", err)
	}
	defer content.Release()
	// utf-8 only when asked for or left to us, and the bytes are text;
	// otherwise base64, as the schema's fallback rule allows.
	want := protocol.ContentEncodingUtf8
	if p.Encoding != nil {
		want = *p.Encoding
	}
	text := want == protocol.ContentEncodingUtf8 && isText(content.Data)
	var meta *rangeInfo
	if r.Set {
		meta = &rangeInfo{Offset: content.Offset, Length: int64(len(content.Data)), Size: content.Size, EOF: content.EOF}
	}
	return encodeReadResult(content.Data, text, content.ContentType, meta)
}

// encodeReadResult encodes a ResourceReadResult holding data (as a JSON
// string when text, as base64 otherwise) in a buffer of about the
// response's size.
func encodeReadResult(data []byte, text bool, contentType string, meta *rangeInfo) (*jsonrpc.EncodedWithRoom, error) {
	enc := protocol.ContentEncodingBase64
	if text {
		enc = protocol.ContentEncodingUtf8
	}
	// Everything after the data is small: encode it first.
	tail := append(make([]byte, 0, 128), `","encoding":`...)
	tail, _ = jsontext.AppendQuote(tail, string(enc))
	if contentType != "" {
		tail = append(tail, `,"contentType":`...)
		tail, _ = jsontext.AppendQuote(tail, contentType)
	}
	if meta != nil {
		m, err := json.Marshal(map[string]rangeInfo{RangeMetaKey: *meta})
		if err != nil {
			return nil, err
		}
		tail = append(tail, `,"_meta":`...)
		tail = append(tail, m...)
	}
	tail = append(tail, '}')
	const head = `{"data":`
	room := jsonrpc.ResponseRoom
	var out []byte
	if text {
		// A JSON string: the quotes, and room for a few escapes.
		out = make([]byte, room, room+len(head)+len(data)+len(data)/64+2+len(tail)+1)
		out = append(out, head...)
		var err error
		if out, err = jsontext.AppendQuote(out, data); err != nil {
			return nil, err
		}
		out = out[:len(out)-1] // the closing quote is tail's first byte
	} else {
		out = make([]byte, room, room+len(head)+1+base64.StdEncoding.EncodedLen(len(data))+len(tail)+1)
		out = append(out, head...)
		out = append(out, '"')
		out = base64.StdEncoding.AppendEncode(out, data)
	}
	// The byte of capacity left is for the response's closing brace.
	return &jsonrpc.EncodedWithRoom{Buf: append(out, tail...), Room: room}, nil
}

func resourceWrite(ctx context.Context, w *Workspace, c host.Client, p *protocol.ResourceWriteParams) (*protocol.ResourceWriteResult, error) {
	var data []byte
	switch p.Encoding {
	case protocol.ContentEncodingUtf8:
		data = []byte(p.Data)
	case protocol.ContentEncodingBase64:
		var err error
		if data, err = base64.StdEncoding.DecodeString(p.Data); err != nil {
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "resourceWrite: data is not valid base64: " + err.Error()}
		}
	default:
		return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "resourceWrite: encoding must be base64 or utf-8"}
	}
	req := files.WriteRequest{Data: data, CreateOnly: deref(p.CreateOnly), Position: deref(p.Position), IfMatch: deref(p.IfMatch)}
	if p.Mode != nil {
		switch *p.Mode {
		case protocol.ResourceWriteModeTruncate:
			req.Mode = files.Truncate
		case protocol.ResourceWriteModeAppend:
			req.Mode = files.Append
		case protocol.ResourceWriteModeInsert:
			req.Mode = files.Insert
		default:
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "resourceWrite: unknown mode " + string(*p.Mode)}
		}
	}
	if err := w.files.Write(ctx, w.scope(c), p.URI, req); err != nil {
		return nil, wireError("resourceWrite", err)
	}
	return &protocol.ResourceWriteResult{}, nil
}

func resourceList(ctx context.Context, w *Workspace, c host.Client, p *protocol.ResourceListParams) (*protocol.ResourceListResult, error) {
	entries, err := w.files.List(ctx, w.scope(c), p.URI)
	if err != nil {
		return nil, wireError("resourceList", err)
	}
	res := &protocol.ResourceListResult{Entries: make([]protocol.DirectoryEntry, 0, len(entries))}
	for _, e := range entries {
		t := protocol.DirectoryEntryType("file")
		if e.Dir {
			t = "directory"
		}
		res.Entries = append(res.Entries, protocol.DirectoryEntry{Name: e.Name, Type: t})
	}
	return res, nil
}

func resourceCopy(ctx context.Context, w *Workspace, c host.Client, p *protocol.ResourceCopyParams) (*protocol.ResourceCopyResult, error) {
	if err := w.files.Copy(ctx, w.scope(c), p.Source, p.Destination, deref(p.FailIfExists)); err != nil {
		return nil, wireError("resourceCopy", err)
	}
	return &protocol.ResourceCopyResult{}, nil
}

func resourceMove(ctx context.Context, w *Workspace, c host.Client, p *protocol.ResourceMoveParams) (*protocol.ResourceMoveResult, error) {
	if err := w.files.Move(ctx, w.scope(c), p.Source, p.Destination, deref(p.FailIfExists)); err != nil {
		return nil, wireError("resourceMove", err)
	}
	return &protocol.ResourceMoveResult{}, nil
}

func resourceDelete(ctx context.Context, w *Workspace, c host.Client, p *protocol.ResourceDeleteParams) (*protocol.ResourceDeleteResult, error) {
	if err := w.files.Delete(ctx, w.scope(c), p.URI, deref(p.Recursive)); err != nil {
		return nil, wireError("resourceDelete", err)
	}
	return &protocol.ResourceDeleteResult{}, nil
}

func resourceMkdir(ctx context.Context, w *Workspace, c host.Client, p *protocol.ResourceMkdirParams) (*protocol.ResourceMkdirResult, error) {
	if err := w.files.Mkdir(ctx, w.scope(c), p.URI); err != nil {
		return nil, wireError("resourceMkdir", err)
	}
	return &protocol.ResourceMkdirResult{}, nil
}

func resourceResolve(ctx context.Context, w *Workspace, c host.Client, p *protocol.ResourceResolveParams) (*protocol.ResourceResolveResult, error) {
	follow := p.FollowSymlinks == nil || *p.FollowSymlinks
	info, err := w.files.Resolve(ctx, w.scope(c), p.URI, follow)
	if err != nil {
		return nil, wireError("resourceResolve", err)
	}
	res := &protocol.ResourceResolveResult{URI: info.URI, Type: protocol.ResourceType(info.Type)}
	if info.HasSize {
		res.Size = protocol.Ptr(info.Size)
	}
	if !info.ModTime.IsZero() {
		res.Mtime = protocol.Ptr(protocol.FormatTime(info.ModTime))
	}
	if info.ContentType != "" {
		res.ContentType = protocol.Ptr(info.ContentType)
	}
	if info.ETag != "" {
		res.Etag = protocol.Ptr(info.ETag)
	}
	return res, nil
}

// resourceRequest grants access under a Requestable directory for the
// rest of the connection. A URI already in scope is granted at once; one
// nothing could grant is refused with PermissionDenied.
func resourceRequest(ctx context.Context, w *Workspace, c host.Client, p *protocol.ResourceRequestParams) (*protocol.ResourceRequestResult, error) {
	var need files.Access
	if deref(p.Read) {
		need |= files.Read
	}
	if deref(p.Write) {
		need |= files.Write
	}
	root, err := w.files.Request(w.scope(c), p.URI, need)
	if err != nil {
		return nil, wireError("resourceRequest", err)
	}
	if root != (files.Root{}) {
		w.grant(c, root)
		w.log.Info("access granted", "client", c.ID(), "dir", root.Dir, "access", root.Access.String())
	}
	return &protocol.ResourceRequestResult{}, nil
}

// isText reports whether data can go as utf-8: valid UTF-8 with no NUL
// byte (which marks binary files).
func isText(data []byte) bool {
	return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
