package browsertest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestShotNamesAndCounts starts a tab and checks that screenshots are
// numbered in order and their names made safe for a file name.
func TestShotNamesAndCounts(t *testing.T) {
	tab := Start(t, Options{What: "the browsertest test", Width: 320, Height: 240})
	if err := chromedp.Do(tab.Ctx, chromedp.Navigate("data:text/html,<p>hi</p>")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, file string }{
		{"first", "01-first.png"},
		{`failed waiting for 'a/b' "c"`, "02-failed-waiting-for--a-b---c-.png"},
	}
	for _, tt := range tests {
		tab.Shot(tt.name)
		fi, err := os.Stat(filepath.Join(tab.Dir, tt.file))
		if err != nil {
			t.Fatalf("after Shot(%q): %v", tt.name, err)
		}
		if fi.Size() == 0 {
			t.Fatalf("%s is empty", tt.file)
		}
	}
	if tab.Shots != len(tests) {
		t.Fatalf("Shots = %d, want %d", tab.Shots, len(tests))
	}
}
