package changeset

import (
	"slices"
	"testing"
)

func TestParseDiff(t *testing.T) {
	raw := ":100644 100644 aaaa bbbb M\x00a.txt\x00" +
		":000000 100644 0000 cccc A\x00new.bin\x00" +
		":100644 100644 dddd eeee R087\x00old name.txt\x00new name.txt\x00" +
		":160000 160000 ffff 1111 M\x00sub\x00" +
		":100644 000000 2222 0000 D\x00../outside\x00" +
		"3\t1\ta.txt\x00" +
		"-\t-\tnew.bin\x00" +
		"2\t0\t\x00old name.txt\x00new name.txt\x00" +
		"1\t1\tsub\x00" +
		"0\t4\t../outside\x00"
	got, err := parseDiff([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := []change{
		{status: modified, path: "a.txt", oldPath: "a.txt", oldMode: "100644", newMode: "100644", added: 3, removed: 1, counted: true},
		{status: added, path: "new.bin", oldPath: "new.bin", oldMode: "000000", newMode: "100644", binary: true, counted: true},
		{status: renamed, path: "new name.txt", oldPath: "old name.txt", oldMode: "100644", newMode: "100644", added: 2, counted: true},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{":100644 M\x00a\x00", ":100644 100644 a b R100\x00only-one"} {
		if _, err := parseDiff([]byte(bad)); err == nil {
			t.Errorf("parseDiff(%q) accepted it", bad)
		}
	}
}

func TestParseHunks(t *testing.T) {
	diff := "diff --git a/f b/f\n--- a/f\n+++ b/f\n" +
		"@@ -2 +2 @@ ctx\n-two\n+TWO\n" +
		"@@ -5,0 +6,2 @@\n+x\n+y\n" +
		"@@ -9,2 +10 @@\n-nine\n-ten\n\\ No newline at end of file\n+NINE\n"
	got, binary, err := parseHunks([]byte(diff))
	if err != nil || binary {
		t.Fatal(err, binary)
	}
	want := []hunk{
		{oldStart: 2, oldCount: 1, newStart: 2, newCount: 1, removed: []string{"two\n"}},
		{oldStart: 5, oldCount: 0, newStart: 6, newCount: 2},
		{oldStart: 9, oldCount: 2, newStart: 10, newCount: 1, removed: []string{"nine\n", "ten"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.oldStart != w.oldStart || g.oldCount != w.oldCount || g.newStart != w.newStart || g.newCount != w.newCount || !slices.Equal(g.removed, w.removed) {
			t.Errorf("hunk %d: got %+v, want %+v", i, g, w)
		}
	}
	if _, binary, _ := parseHunks([]byte("diff --git a/b b/b\nBinary files a/b and b/b differ\n")); !binary {
		t.Error("a binary diff is not reported as binary")
	}
	if _, _, err := parseHunks([]byte("@@ -x +1 @@\n")); err == nil {
		t.Error("a bad hunk header is accepted")
	}
}

func TestContentURIPaths(t *testing.T) {
	for _, rel := range []string{"a.txt", "dir/with space/ü.go", "100%/#?.md"} {
		uri := contentURI("s1", "k", "0123456789abcdef0123456789abcdef01234567", rel)
		parts := splitContent(t, uri)
		got, err := relOf(parts)
		if err != nil || got != rel {
			t.Errorf("%q: round trip gave %q, %v (uri %s)", rel, got, err, uri)
		}
	}
	for _, bad := range []string{"..", "a/../../b", "%2e%2e", "a%2f..%2fb", "a//b", "./a", "a%00b", "%zz"} {
		if got, err := relOf(bad); err == nil {
			t.Errorf("relOf(%q) = %q, want an error", bad, got)
		}
	}
}

func splitContent(t *testing.T, uri string) string {
	t.Helper()
	// ahp-changeset-content:/<session>/<key>/<rev>/<path>
	n := 0
	for i := 0; i < len(uri); i++ {
		if uri[i] == '/' {
			n++
			if n == 4 {
				return uri[i+1:]
			}
		}
	}
	t.Fatalf("bad content URI %s", uri)
	return ""
}
