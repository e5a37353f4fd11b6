package reducer_test

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

func TestChangeset(t *testing.T) {
	const (
		fileA  = `{"id":"a","edit":{"after":{"uri":"file:///a","content":{"uri":"content:/a"}}}}`
		fileA2 = `{"id":"a","edit":{"after":{"uri":"file:///a","content":{"uri":"content:/a2"}}}}`
		fileB  = `{"id":"b","edit":{"after":{"uri":"file:///b","content":{"uri":"content:/b"}}}}`
		fileC  = `{"id":"c","edit":{"after":{"uri":"file:///c","content":{"uri":"content:/c"}}}}`
		opPR   = `{"id":"pr","label":"PR","scopes":["changeset"],"status":"idle"}`
		gitErr = `{"errorType":"git","message":"boom"}`
	)
	runChannelCases(t, "ChangesetState", []channelCase{{
		// Changesets guide, "File Review", reset on edit: the host resets
		// review by re-emitting the file without reviewed: true.
		name:    "fileSet re-emitting a reviewed file without reviewed resets review",
		initial: `{"status":"ready","files":[{"id":"a","edit":{"after":{"uri":"file:///a","content":{"uri":"content:/a"}}},"reviewed":true}]}`,
		actions: []string{`{"type":"changeset/fileSet","file":` + fileA2 + `}`},
		want:    `{"status":"ready","files":[` + fileA2 + `]}`,
	}, {
		name:    "fileSet keeps the position of a replaced file",
		initial: `{"status":"ready","files":[` + fileA + `,` + fileB + `,` + fileC + `]}`,
		actions: []string{`{"type":"changeset/fileSet","file":{"id":"b","edit":{}}}`},
		want:    `{"status":"ready","files":[` + fileA + `,{"id":"b","edit":{}},` + fileC + `]}`,
	}, {
		// Changesets guide, "File Review": only reviewed changes; edit
		// and _meta are left as they were.
		name: "filesReviewChanged leaves edit and _meta untouched",
		initial: `{"status":"ready","files":[
			{"id":"a","edit":{"after":{"uri":"file:///a","content":{"uri":"content:/a"}},"diff":{"added":3}},"_meta":{"k":[1,2]}}
		]}`,
		actions: []string{`{"type":"changeset/filesReviewChanged","files":["a","a"],"reviewed":true}`},
		want: `{"status":"ready","files":[
			{"id":"a","edit":{"after":{"uri":"file:///a","content":{"uri":"content:/a"}},"diff":{"added":3}},"_meta":{"k":[1,2]},"reviewed":true}
		]}`,
	}, {
		name:    "filesReviewChanged matching no file returns the same state",
		initial: `{"status":"ready","files":[` + fileA + `]}`,
		actions: []string{
			`{"type":"changeset/filesReviewChanged","files":["x"],"reviewed":true}`,
			`{"type":"changeset/filesReviewChanged","files":[],"reviewed":true}`,
		},
		want: `{"status":"ready","files":[` + fileA + `]}`,
		same: true,
	}, {
		name:    "fileRemoved for an unknown id returns the same state",
		initial: `{"status":"ready","files":[` + fileA + `]}`,
		actions: []string{`{"type":"changeset/fileRemoved","fileId":"x"}`},
		want:    `{"status":"ready","files":[` + fileA + `]}`,
		same:    true,
	}, {
		name:    "fileRemoved of the middle file keeps the others in order",
		initial: `{"status":"ready","files":[` + fileA + `,` + fileB + `,` + fileC + `]}`,
		actions: []string{`{"type":"changeset/fileRemoved","fileId":"b"}`},
		want:    `{"status":"ready","files":[` + fileA + `,` + fileC + `]}`,
	}, {
		// ChangesetState.error is present iff the status is error.
		name:    "statusChanged to computing drops the error",
		initial: `{"status":"error","error":` + gitErr + `,"files":[]}`,
		actions: []string{`{"type":"changeset/statusChanged","status":"computing"}`},
		want:    `{"status":"computing","files":[]}`,
	}, {
		name:    "statusChanged ignores an error sent with a non-error status",
		initial: `{"status":"computing","files":[]}`,
		actions: []string{`{"type":"changeset/statusChanged","status":"ready","error":` + gitErr + `}`},
		want:    `{"status":"ready","files":[]}`,
	}, {
		// ChangesetContentChangedAction: full replacement; the error is
		// replaced like the files, so a successful refresh clears it.
		name:    "contentChanged without an error clears the previous one and keeps the status",
		initial: `{"status":"error","error":` + gitErr + `,"files":[` + fileA + `]}`,
		actions: []string{`{"type":"changeset/contentChanged","files":[` + fileB + `]}`},
		want:    `{"status":"error","files":[` + fileB + `]}`,
	}, {
		// Operations "when present" replace the list: an empty list is
		// present and empties it; an absent one leaves it alone.
		name:    "contentChanged with an empty operation list empties operations",
		initial: `{"status":"ready","files":[],"operations":[` + opPR + `]}`,
		actions: []string{`{"type":"changeset/contentChanged","files":[],"operations":[]}`},
		want:    `{"status":"ready","files":[],"operations":[]}`,
	}, {
		name:    "operationsChanged with an empty list keeps an empty list",
		initial: `{"status":"ready","files":[],"operations":[` + opPR + `]}`,
		actions: []string{`{"type":"changeset/operationsChanged","operations":[]}`},
		want:    `{"status":"ready","files":[],"operations":[]}`,
	}, {
		name:    "operationsChanged without operations removes them",
		initial: `{"status":"ready","files":[],"operations":[` + opPR + `]}`,
		actions: []string{`{"type":"changeset/operationsChanged"}`},
		want:    `{"status":"ready","files":[]}`,
	}, {
		name:    "operationStatusChanged with no operations returns the same state",
		initial: `{"status":"ready","files":[]}`,
		actions: []string{`{"type":"changeset/operationStatusChanged","operationId":"pr","status":"running"}`},
		want:    `{"status":"ready","files":[]}`,
		same:    true,
	}, {
		// ChangesetOperation.error is present iff the status is error.
		name: "operationStatusChanged to disabled drops the error and keeps the other fields",
		initial: `{"status":"ready","files":[],"operations":[
			{"id":"pr","label":"PR","description":"d","scopes":["changeset","resource"],"confirmation":{"markdown":"**sure?**"},"icon":"git","group":"g","status":"error","error":` + gitErr + `}
		]}`,
		actions: []string{`{"type":"changeset/operationStatusChanged","operationId":"pr","status":"disabled"}`},
		want: `{"status":"ready","files":[],"operations":[
			{"id":"pr","label":"PR","description":"d","scopes":["changeset","resource"],"confirmation":{"markdown":"**sure?**"},"icon":"git","group":"g","status":"disabled"}
		]}`,
	}, {
		name:    "cleared keeps status, error and operations",
		initial: `{"status":"error","error":` + gitErr + `,"files":[` + fileA + `],"operations":[` + opPR + `]}`,
		actions: []string{`{"type":"changeset/cleared"}`},
		want:    `{"status":"error","error":` + gitErr + `,"files":[],"operations":[` + opPR + `]}`,
	}, {
		name:    "cleared on an empty changeset returns the same state",
		initial: `{"status":"ready","files":[]}`,
		actions: []string{`{"type":"changeset/cleared"}`},
		want:    `{"status":"ready","files":[]}`,
		same:    true,
	}, {
		name:    "an action of another channel returns the same state",
		initial: `{"status":"ready","files":[` + fileA + `]}`,
		actions: []string{`{"type":"terminal/cleared"}`, `{"type":"annotations/removed","annotationId":"a"}`},
		want:    `{"status":"ready","files":[` + fileA + `]}`,
		same:    true,
	}})
}

// TestChangesetFileSetBranches checks that two states derived from one by
// appending different files do not share the appended slot.
func TestChangesetFileSetBranches(t *testing.T) {
	files := make([]protocol.ChangesetFile, 1, 4) // spare capacity invites aliasing
	files[0] = protocol.ChangesetFile{ID: "a"}
	base := &protocol.ChangesetState{Status: protocol.ChangesetStatusReady, Files: files}
	x := reducer.Changeset(base, &protocol.ChangesetFileSetAction{File: protocol.ChangesetFile{ID: "x"}})
	y := reducer.Changeset(base, &protocol.ChangesetFileSetAction{File: protocol.ChangesetFile{ID: "y"}})
	if got := x.Files[1].ID; got != "x" {
		t.Errorf("first branch appended %q, want x", got)
	}
	if got := y.Files[1].ID; got != "y" {
		t.Errorf("second branch appended %q, want y", got)
	}
	if len(base.Files) != 1 {
		t.Errorf("base has %d files, want 1", len(base.Files))
	}
}
