package web_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
)

// gitRepo makes a git repository with files committed, or skips without
// git (fails under CI=true, where .ci/run installs it).
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git not found; the changeset browser test needs it under CI=true")
		}
		t.Skip("git not found; skipping the changeset browser test")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	run("config", "user.email", "test@example.invalid")
	run("config", "user.name", "Test")
	writeFiles(t, dir, files)
	run("add", "-A")
	run("commit", "-q", "-m", "first")
	return dir
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// press clicks the element sel names, once it is enabled, as it is when
// the click happens. The
// list of files is rebuilt whenever the host sends a new state of a file,
// which can come at any time (the host watches the directory), so an
// element found first and clicked after may be gone.
func (b *browser) press(what, sel string) {
	b.t.Helper()
	b.wait(what, `(() => { const el = document.querySelector(`+jsString(sel)+`); if (!el || el.disabled) return false; el.click(); return true; })()`)
}

// waitFile waits until a file reads want.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _ := os.ReadFile(path)
		if string(got) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s reads %q, want %q", path, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBrowserChanges shows a session's uncommitted changes in the page:
// the files with their diffs, the Viewed flag (seen by a second client),
// a revert of some lines and of a whole file after their confirmation,
// and a commit of the rest.
func TestBrowserChanges(t *testing.T) {
	ten := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	dir := gitRepo(t, map[string]string{"a.txt": ten, "b.txt": "keep\n"})
	edited := strings.NewReplacer("two", "TWO", "nine", "NINE").Replace(ten)
	writeFiles(t, dir, map[string]string{"a.txt": edited, "b.txt": "changed\n", "c.txt": "a new file\n"})

	_, url := testHost(t)
	b := newBrowser(t, 1100, 800)
	b.recordPolicyViolations()
	b.sessionIn(url, dir, "the repository")
	b.wait("the session's changesets", `!!window.ahpApp.client.state(window.ahpApp.sessionURI)?.changesets?.length`)

	file := func(name string) string { return `#cs-files li[data-id$="/` + name + `"]` }
	b.run("opening the changes", chromedp.Click(chromedp.ID("#changes-tab")))
	b.wait("the uncommitted changes", `[...document.querySelectorAll('#cs-list .tab')].some((t) => t.textContent === 'Uncommitted Changes') &&
		document.querySelector('#cs-status').textContent === 'ready' && document.querySelectorAll('#cs-files li.cs-file').length === 3`)
	if got := eval[string](b, `document.querySelector('#cs-stats').textContent`); got != "3 files, +4 −3" {
		t.Errorf("the totals read %q, want %q", got, "3 files, +4 −3")
	}
	if got := eval[string](b, `document.querySelector('`+file("c.txt")+` .tag').textContent`); got != "added" {
		t.Errorf("c.txt is shown %q, want added", got)
	}

	// The second client follows the same changeset.
	uri := eval[string](b, `window.ahpApp.changes.uri`)
	_, sub, _ := otherOn(t, url, uri)
	changeset := func(what string, ok func(*protocol.ChangesetState) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			st := client.StateOf[*protocol.ChangesetState](sub)
			if st != nil && ok(st) {
				return
			}
			if time.Now().After(deadline) {
				raw, _ := protocol.Marshal(st)
				t.Fatalf("the second client never saw %s: %.2000s", what, raw)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A file's diff, in two hunks.
	b.press("opening a.txt", file("a.txt")+" .cs-name")
	b.wait("its diff", `(() => { const d = document.querySelector('`+file("a.txt")+` .cs-diff pre'); if (!d) return false;
		const lines = [...d.querySelectorAll('.hunk > div:not(.hunk-ops)')].map((l) => l.textContent);
		return d.querySelectorAll('.hunk').length === 2 && lines.join('|') === '- two|+ TWO|- nine|+ NINE'; })()`)
	b.shot("changes-diff")

	// Viewed, as the second client sees it.
	b.press("marking it viewed", file("a.txt")+" .cs-viewed input")
	changeset("a.txt reviewed", func(st *protocol.ChangesetState) bool {
		for _, f := range st.Files {
			if strings.HasSuffix(f.ID, "/a.txt") {
				return f.Reviewed != nil && *f.Reviewed
			}
		}
		return false
	})
	b.wait("the page's own echo", `window.ahpApp.client.mirrors.get(window.ahpApp.changes.uri).pending.length === 0 &&
		document.querySelector('`+file("a.txt")+` .cs-viewed input').checked`)

	// Revert the first hunk only, once the confirmation is accepted.
	b.press("reverting the first hunk", file("a.txt")+` .hunk .hunk-ops button[data-op="revert"]`)
	b.wait("the confirmation", `document.querySelector('#op-dialog').open && document.querySelector('#op-text').textContent.length > 0`)
	b.shot("changes-confirm")
	b.run("accepting it", chromedp.Click(chromedp.ID("#op-ok")))
	waitFile(t, filepath.Join(dir, "a.txt"), strings.Replace(ten, "nine", "NINE", 1))

	// Cancelling a confirmation invokes nothing; accepting reverts the file.
	b.press("reverting b.txt", file("b.txt")+` .cs-file-head button[data-op="revert"]`)
	b.wait("the confirmation", `document.querySelector('#op-dialog').open`)
	b.run("cancelling", chromedp.Click(chromedp.CSS(`#op-dialog button[value="cancel"]`)))
	b.wait("the dialog closed", `!document.querySelector('#op-dialog').open`)
	if got, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(got) != "changed\n" {
		t.Fatalf("b.txt reads %q after a cancelled revert", got)
	}
	b.press("reverting b.txt", file("b.txt")+` .cs-file-head button[data-op="revert"]`)
	b.wait("the confirmation", `document.querySelector('#op-dialog').open`)
	b.run("accepting it", chromedp.Click(chromedp.ID("#op-ok")))
	b.wait("the result", `[...document.querySelectorAll('#toasts .toast')].some((t) => t.textContent.includes('b.txt'))`)
	waitFile(t, filepath.Join(dir, "b.txt"), "keep\n")
	changeset("b.txt gone", func(st *protocol.ChangesetState) bool { return len(st.Files) == 2 })
	b.wait("the changes recomputed", `document.querySelectorAll('#cs-files li.cs-file').length === 2 && !document.querySelector('`+file("b.txt")+`') &&
		document.querySelector('#cs-status').textContent === 'ready'`)
	b.shot("changes-reverted")

	// At phone width the diff scrolls inside its box, not the page.
	b.run("narrowing to a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile))
	b.wait("the diff still open", `!!document.querySelector('`+file("a.txt")+` .cs-diff pre')`)
	if w := eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the changes at 390 px are %d px wide, want no horizontal scrolling", w)
	}
	b.shot("changes-phone")
	b.run("widening again", chromedp.EmulateViewport(1100, 800))

	// Commit what is left.
	b.press("committing", `#cs-ops button[data-op="commit"]`)
	b.wait("no changes left", `document.querySelectorAll('#cs-files li.cs-file').length === 0 && document.querySelector('#cs-status').textContent === 'ready'`)
	changeset("no changes", func(st *protocol.ChangesetState) bool { return len(st.Files) == 0 })
	if status := gitOut(t, dir, "status", "--porcelain"); status != "" {
		t.Errorf("after the commit git status shows %q", status)
	}
	if n := strings.Count(gitOut(t, dir, "log", "--oneline"), "\n"); n != 2 {
		t.Errorf("the repository has %d commits, want 2", n)
	}
	b.shot("changes-committed")
	b.checkNoPolicyViolations()
}
