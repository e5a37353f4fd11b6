package protocol

// Values of older protocol versions that the 1.x schema renamed. The
// per-version views convert them; see also the legacy members of the
// generated types (marked "older protocol versions only").

// SessionLifecycleCreationFailed is the failed session lifecycle as
// versions before 0.9.0 spell it; 1.x calls it SessionLifecycleFailed.
const SessionLifecycleCreationFailed SessionLifecycle = "creationFailed"

// CodeContentNotFound is the error code versions before 0.9.0 used for
// content that does not exist; 1.x reserves -32006 and leaves it unassigned.
const CodeContentNotFound ErrorCode = -32006

// Info returns the error that ended the turn, from the error part (1.x) or
// from the error member of older versions.
func (a *ChatErrorAction) Info() ErrorInfo {
	switch {
	case a.Part != nil:
		return a.Part.Error
	case a.Error != nil:
		return *a.Error
	}
	return ErrorInfo{}
}

// ErrorInfo returns why a turn failed: the error of its last response part
// (1.x), or the error member of older versions; nil when it did not fail
// with an error.
func (t *Turn) ErrorInfo() *ErrorInfo {
	if n := len(t.ResponseParts); n > 0 {
		if e, ok := t.ResponseParts[n-1].(*ErrorResponsePart); ok {
			return &e.Error
		}
	}
	return t.Error
}
