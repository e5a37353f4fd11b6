package reducer_test

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

func TestAnnotations(t *testing.T) {
	const (
		rng   = `{"start":{"line":1,"character":0},"end":{"line":1,"character":4}}`
		rng2  = `{"start":{"line":7,"character":2},"end":{"line":9,"character":0}}`
		annA  = `{"id":"a","turnId":"t1","resource":"file:///a","resolved":false,"entries":[{"id":"e1","text":"one"}]}`
		annB  = `{"id":"b","turnId":"t1","resource":"file:///b","range":` + rng + `,"resolved":false,"entries":[{"id":"e1","text":"two"}]}`
		annB2 = `{"id":"b","turnId":"t2","resource":"file:///b","resolved":true,"entries":[{"id":"e9","text":{"markdown":"*new*"}}]}`
		annC  = `{"id":"c","turnId":"t1","resource":"file:///c","resolved":false,"entries":[{"id":"e1","text":"three"}]}`
	)
	runChannelCases(t, "AnnotationsState", []channelCase{{
		name:    "set keeps the position of a replaced annotation",
		initial: `{"annotations":[` + annA + `,` + annB + `,` + annC + `]}`,
		actions: []string{`{"type":"annotations/set","annotation":` + annB2 + `}`},
		want:    `{"annotations":[` + annA + `,` + annB2 + `,` + annC + `]}`,
	}, {
		name:    "set on an empty channel adds the first annotation",
		initial: `{"annotations":[]}`,
		actions: []string{`{"type":"annotations/set","annotation":` + annA + `}`},
		want:    `{"annotations":[` + annA + `]}`,
	}, {
		// AnnotationsUpdatedAction: resolved false re-opens; omitted fields,
		// the range among them, are left as they are.
		name:    "updated re-opens a resolved annotation and keeps its range",
		initial: `{"annotations":[{"id":"b","turnId":"t1","resource":"file:///b","range":` + rng + `,"resolved":true,"entries":[{"id":"e1","text":"two"}]}]}`,
		actions: []string{`{"type":"annotations/updated","annotationId":"b","resolved":false}`},
		want:    `{"annotations":[` + annB + `]}`,
	}, {
		name:    "updated narrows a whole-file annotation to a range",
		initial: `{"annotations":[` + annA + `]}`,
		actions: []string{`{"type":"annotations/updated","annotationId":"a","range":` + rng2 + `}`},
		want:    `{"annotations":[{"id":"a","turnId":"t1","resource":"file:///a","range":` + rng2 + `,"resolved":false,"entries":[{"id":"e1","text":"one"}]}]}`,
	}, {
		name:    "updated with only the id changes nothing visible",
		initial: `{"annotations":[` + annB + `]}`,
		actions: []string{`{"type":"annotations/updated","annotationId":"b"}`},
		want:    `{"annotations":[` + annB + `]}`,
	}, {
		name:    "removed of the middle annotation keeps the others in order",
		initial: `{"annotations":[` + annA + `,` + annB + `,` + annC + `]}`,
		actions: []string{`{"type":"annotations/removed","annotationId":"b"}`},
		want:    `{"annotations":[` + annA + `,` + annC + `]}`,
	}, {
		name:    "removed of the last annotation leaves an empty list",
		initial: `{"annotations":[` + annA + `]}`,
		actions: []string{`{"type":"annotations/removed","annotationId":"a"}`},
		want:    `{"annotations":[]}`,
	}, {
		name:    "entrySet keeps markdown text and _meta of the entry",
		initial: `{"annotations":[` + annA + `]}`,
		actions: []string{`{"type":"annotations/entrySet","annotationId":"a","entry":{"id":"e2","text":{"markdown":"**b**"},"_meta":{"by":"bob"}}}`},
		want:    `{"annotations":[{"id":"a","turnId":"t1","resource":"file:///a","resolved":false,"entries":[{"id":"e1","text":"one"},{"id":"e2","text":{"markdown":"**b**"},"_meta":{"by":"bob"}}]}]}`,
	}, {
		// Annotation: every annotation keeps at least one entry, but the
		// producer enforces that by sending annotations/removed; the
		// reducer applies entryRemoved as given, like the reference one.
		name:    "entryRemoved of the only entry leaves the annotation empty",
		initial: `{"annotations":[` + annA + `]}`,
		actions: []string{`{"type":"annotations/entryRemoved","annotationId":"a","entryId":"e1"}`},
		want:    `{"annotations":[{"id":"a","turnId":"t1","resource":"file:///a","resolved":false,"entries":[]}]}`,
	}, {
		name:    "actions naming missing annotations or entries return the same state",
		initial: `{"annotations":[` + annA + `]}`,
		actions: []string{
			`{"type":"annotations/removed","annotationId":"x"}`,
			`{"type":"annotations/updated","annotationId":"x","resolved":true}`,
			`{"type":"annotations/entrySet","annotationId":"x","entry":{"id":"e1","text":"lost"}}`,
			`{"type":"annotations/entryRemoved","annotationId":"a","entryId":"x"}`,
			`{"type":"annotations/entryRemoved","annotationId":"x","entryId":"e1"}`,
		},
		want: `{"annotations":[` + annA + `]}`,
		same: true,
	}, {
		name:    "unknown actions and actions of other channels return the same state",
		initial: `{"annotations":[` + annA + `]}`,
		actions: []string{`{"type":"annotations/pinned","annotationId":"a"}`, `{"type":"changeset/fileRemoved","fileId":"a"}`},
		want:    `{"annotations":[` + annA + `]}`,
		same:    true,
	}})
}

// TestAnnotationsEntrySetBranches checks that entries appended to one
// annotation on two branches of the same state stay apart.
func TestAnnotationsEntrySetBranches(t *testing.T) {
	entries := make([]protocol.AnnotationEntry, 1, 4) // spare capacity invites aliasing
	entries[0] = protocol.AnnotationEntry{ID: "e1"}
	base := &protocol.AnnotationsState{Annotations: []protocol.Annotation{{ID: "a", Entries: entries}}}
	x := reducer.Annotations(base, &protocol.AnnotationsEntrySetAction{AnnotationID: "a", Entry: protocol.AnnotationEntry{ID: "x"}})
	y := reducer.Annotations(base, &protocol.AnnotationsEntrySetAction{AnnotationID: "a", Entry: protocol.AnnotationEntry{ID: "y"}})
	if got := x.Annotations[0].Entries[1].ID; got != "x" {
		t.Errorf("first branch appended %q, want x", got)
	}
	if got := y.Annotations[0].Entries[1].ID; got != "y" {
		t.Errorf("second branch appended %q, want y", got)
	}
	if n := len(base.Annotations[0].Entries); n != 1 {
		t.Errorf("base annotation has %d entries, want 1", n)
	}
}
