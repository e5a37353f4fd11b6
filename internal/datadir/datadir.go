// Package datadir is what ahpd keeps in its data directory for the
// clients of the same user on the same machine: the token clients must
// present, and a runtime file naming the URL of the running ahpd. The ahp
// command reads both, so that it connects without flags.
//
// Both files are created with mode 0600 in a directory of mode 0700: only
// ahpd's user (and root) can read them, which is what makes the token a
// boundary between local users.
package datadir

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ahp-go/ahp/internal/procexists"
)

const (
	// TokenFile is the name of the token's file in the data directory.
	TokenFile = "token"
	// RuntimeFile is the name of the file a running ahpd writes in the
	// data directory, naming its URL and token.
	RuntimeFile = "ahpd-runtime.json"
	// tokenBytes is how many random bytes make a generated token.
	tokenBytes = 24
)

// Default is ahpd's default data directory: ahpd under $XDG_DATA_HOME,
// else on Windows under %LocalAppData%, else ~/.local/share/ahpd. getenv
// reads the environment (os.Getenv, or
// a test's).
func Default(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ahpd"), nil
	}
	if runtime.GOOS == "windows" {
		if d := getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "ahpd"), nil
		}
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return "", errors.New("no home directory to keep sessions in: set --data-dir")
	}
	return filepath.Join(home, ".local", "share", "ahpd"), nil
}

// NewToken returns a fresh random token (hex, from crypto/rand).
func NewToken() string {
	return hex.EncodeToString(randomBytes(tokenBytes))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return b
}

// LoadOrCreateToken returns the token kept in dir, creating dir (0700)
// and the token file (0600) with a new token when there is none. created
// says whether it was made now; fixed says whether an existing file's
// mode let other users read it and was narrowed to 0600.
func LoadOrCreateToken(dir string) (token string, created, fixed bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, false, fmt.Errorf("token: %w", err)
	}
	path := filepath.Join(dir, TokenFile)
	for range 2 {
		token, fixed, err = readToken(path)
		if err == nil {
			return token, false, fixed, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", false, false, err
		}
		token = NewToken()
		err = writeNew(path, []byte(token+"\n"))
		if err == nil {
			return token, true, false, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", false, false, fmt.Errorf("token: %w", err)
		}
		// Another ahpd made it first: read its token.
	}
	return "", false, false, fmt.Errorf("token: %s keeps changing", path)
}

// ReadToken returns the token kept in dir, or an error satisfying
// errors.Is(err, fs.ErrNotExist) when there is none.
func ReadToken(dir string) (string, error) {
	t, _, err := readToken(filepath.Join(dir, TokenFile))
	return t, err
}

// readToken reads a token file, narrowing its mode to 0600 when other
// users could read it (fixed).
func readToken(path string) (token string, fixed bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false, fmt.Errorf("token: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", false, fmt.Errorf("token: %s is not a regular file", path)
	}
	if othersMayRead(fi) {
		if err := f.Chmod(0o600); err != nil {
			return "", false, fmt.Errorf("token: %s is readable by other users and cannot be made private: %w", path, err)
		}
		fixed = true
	}
	data := make([]byte, 4096)
	n, _ := f.Read(data)
	token = strings.TrimSpace(string(data[:n]))
	if token == "" || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", false, fmt.Errorf("token: %s does not hold a token (delete it to have a new one made)", path)
	}
	return token, fixed, nil
}

// writeNew creates path with data and mode 0600 only if it does not exist
// yet (an error satisfying errors.Is(err, fs.ErrExist) otherwise). The
// file is written and synced under a temporary name and then linked into
// place, so a concurrent reader sees the whole file or none.
func writeNew(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Link(tmp, path)
}

// Runtime is what a running ahpd tells local clients: where it listens
// and the token it wants ("" when it runs with --no-token).
type Runtime struct {
	URL   string `json:"url"`
	Token string `json:"token,omitempty"`
	PID   int    `json:"pid"`
}

// WriteRuntime replaces the runtime file in dir (mode 0600, written to a
// temporary file and renamed, so readers never see half of it).
func WriteRuntime(dir string, rt Runtime) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("runtime file: %w", err)
	}
	data, err := json.Marshal(rt)
	if err != nil {
		return fmt.Errorf("runtime file: %w", err)
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.%s", RuntimeFile, hex.EncodeToString(randomBytes(6))))
	if err := writeNew(tmp, append(data, '\n')); err != nil {
		return fmt.Errorf("runtime file: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, RuntimeFile)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("runtime file: %w", err)
	}
	return nil
}

// Live reports whether the ahpd that wrote rt may still run: its process
// exists (a file left by an ahpd that was killed names a process that is
// gone).
func (rt Runtime) Live() bool {
	if rt.PID <= 0 {
		return true // not known: assume it runs
	}
	return procexists.Exists(rt.PID)
}

// ReadRuntime reads the runtime file in dir; the error satisfies
// errors.Is(err, fs.ErrNotExist) when there is none.
func ReadRuntime(dir string) (Runtime, error) {
	var rt Runtime
	data, err := os.ReadFile(filepath.Join(dir, RuntimeFile))
	if err != nil {
		return rt, err
	}
	if err := json.Unmarshal(data, &rt); err != nil || rt.URL == "" {
		return Runtime{}, fmt.Errorf("runtime file %s: not ahpd's", filepath.Join(dir, RuntimeFile))
	}
	return rt, nil
}

// RemoveRuntime removes the runtime file in dir if it is still rt's (a
// later ahpd may have replaced it).
func RemoveRuntime(dir string, rt Runtime) error {
	cur, err := ReadRuntime(dir)
	if err != nil || cur != rt {
		return nil
	}
	if err := os.Remove(filepath.Join(dir, RuntimeFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("runtime file: %w", err)
	}
	return nil
}

// LocalURL is the ws:// URL a client on this machine dials for a
// listener's address: an unspecified address (0.0.0.0, ::) becomes the
// matching loopback address.
func LocalURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "ws://" + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return "ws://" + net.JoinHostPort(host, port) + "/"
}

// IsLoopbackURL reports whether a ws:// or wss:// URL names this machine
// by "localhost" or a loopback address: the only URLs a local token may
// be sent to.
func IsLoopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// SameEndpoint reports whether two URLs name the same port on this
// machine (both loopback, same port).
func SameEndpoint(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil || !IsLoopbackURL(a) || !IsLoopbackURL(b) {
		return false
	}
	return portOf(ua) == portOf(ub)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "wss" || u.Scheme == "https" {
		return "443"
	}
	return "80"
}
