package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
)

// A hard link inside a session's directory to a file outside it is
// refused by every resource command and by resource watches, and the
// outside file is left as it was.
func TestHardLinksRefused(t *testing.T) {
	const secret = "outside secret"
	yes := true
	for _, tc := range []struct {
		name string
		// call sends the command; link is the hard link's URI, dir the
		// session directory's path.
		call func(c callFunc, link, dir string) error
	}{
		{"resourceRead", func(c callFunc, link, _ string) error {
			return c("resourceRead", &protocol.ResourceReadParams{URI: link})
		}},
		{"resourceRead ranged", func(c callFunc, link, _ string) error {
			return c("resourceRead", &protocol.ResourceReadParams{URI: link, Meta: rangeMeta(0)})
		}},
		{"resourceWrite truncate", func(c callFunc, link, _ string) error {
			return c("resourceWrite", &protocol.ResourceWriteParams{URI: link, Data: "clobbered", Encoding: protocol.ContentEncodingUtf8})
		}},
		{"resourceWrite append", func(c callFunc, link, _ string) error {
			return c("resourceWrite", &protocol.ResourceWriteParams{URI: link, Data: " appended", Encoding: protocol.ContentEncodingUtf8, Mode: protocol.Ptr(protocol.ResourceWriteModeAppend)})
		}},
		{"resourceWrite insert", func(c callFunc, link, _ string) error {
			return c("resourceWrite", &protocol.ResourceWriteParams{URI: link, Data: "inserted ", Encoding: protocol.ContentEncodingUtf8, Mode: protocol.Ptr(protocol.ResourceWriteModeInsert)})
		}},
		{"resourceCopy source", func(c callFunc, link, dir string) error {
			return c("resourceCopy", &protocol.ResourceCopyParams{Source: link, Destination: files.URIOf(filepath.Join(dir, "copy.txt"))})
		}},
		{"resourceCopy tree holding the link", func(c callFunc, _, dir string) error {
			return c("resourceCopy", &protocol.ResourceCopyParams{Source: files.URIOf(filepath.Join(dir, "sub")), Destination: files.URIOf(filepath.Join(dir, "sub2"))})
		}},
		{"resourceCopy destination", func(c callFunc, link, dir string) error {
			return c("resourceCopy", &protocol.ResourceCopyParams{Source: files.URIOf(filepath.Join(dir, "own.txt")), Destination: link})
		}},
		{"resourceMove source", func(c callFunc, link, dir string) error {
			return c("resourceMove", &protocol.ResourceMoveParams{Source: link, Destination: files.URIOf(filepath.Join(dir, "moved.txt"))})
		}},
		{"resourceMove destination", func(c callFunc, link, dir string) error {
			return c("resourceMove", &protocol.ResourceMoveParams{Source: files.URIOf(filepath.Join(dir, "own.txt")), Destination: link})
		}},
		{"resourceDelete", func(c callFunc, link, _ string) error {
			return c("resourceDelete", &protocol.ResourceDeleteParams{URI: link})
		}},
		{"resourceResolve", func(c callFunc, link, _ string) error {
			return c("resourceResolve", &protocol.ResourceResolveParams{URI: link})
		}},
		{"resourceResolve through a symbolic link", func(c callFunc, _, dir string) error {
			return c("resourceResolve", &protocol.ResourceResolveParams{URI: files.URIOf(filepath.Join(dir, "sym")), FollowSymlinks: &yes})
		}},
		{"createResourceWatch", func(c callFunc, link, _ string) error {
			return c("createResourceWatch", &protocol.CreateResourceWatchParams{URI: link})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir, outside := filepath.Join(base, "wd"), filepath.Join(base, "outside")
			must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
			must(t, os.Mkdir(outside, 0o755))
			target := filepath.Join(outside, "secret.txt")
			must(t, os.WriteFile(target, []byte(secret), 0o600))
			must(t, os.WriteFile(filepath.Join(dir, "own.txt"), []byte("mine"), 0o644))
			link := filepath.Join(dir, "sub", "link")
			must(t, os.Link(target, link))
			must(t, os.Symlink("sub/link", filepath.Join(dir, "sym")))

			srv := startHost(t, nil, nil)
			c := srv.Dial(t, "c1")
			initialize(t, c)
			createSession(t, c, "s1", dir)
			call := func(method string, params any) error { return c.Call(method, params, nil) }

			e := rpcCode(t, tc.call(call, files.URIOf(link), dir))
			if e.Code != protocol.CodePermissionDenied || !strings.Contains(e.Message, "hard links") {
				t.Fatalf("got %v, want PermissionDenied naming the hard links", e)
			}
			if got, err := os.ReadFile(target); err != nil || string(got) != secret {
				t.Fatalf("the outside file now holds %q (%v)", got, err)
			}
			if got, err := os.ReadFile(link); err != nil || string(got) != secret {
				t.Fatalf("the link now holds %q (%v)", got, err)
			}
			for _, p := range []string{"copy.txt", "sub2", "moved.txt"} {
				if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
					t.Fatalf("%s was made", p)
				}
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "own.txt")); string(got) != "mine" {
				t.Fatalf("own.txt now holds %q", got)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 3 {
				t.Fatalf("the directory holds %d entries, want 3 (no temporary copy left)", len(ents))
			}
			// The same commands still work on a file with one name.
			must(t, call("resourceRead", &protocol.ResourceReadParams{URI: files.URIOf(filepath.Join(dir, "own.txt"))}))
		})
	}
}

type callFunc func(method string, params any) error
