package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"github.com/ahp-go/ahp/internal/datadir"
)

// tokenConfig says which token clients must present. By default ahpd
// keeps one in its data directory (datadir.TokenFile), made at first
// start; --token or AHPD_TOKEN override it, and --no-token runs without
// one, on loopback only.
type tokenConfig struct {
	Token   string `json:"token"`
	NoToken bool   `json:"noToken"`
}

func (c *tokenConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Token, "token", c.Token, "token clients must present (default $AHPD_TOKEN, else the one kept in --data-dir, made at first start)")
	fs.BoolVar(&c.NoToken, "no-token", c.NoToken, "accept clients without a token (loopback only): any local user can then connect")
}

func (c *tokenConfig) validate(loopback bool, listen string) error {
	if c.NoToken && c.Token != "" {
		return errors.New("--no-token and a token (--token, AHPD_TOKEN or the config file) cannot go together")
	}
	if c.NoToken && !loopback {
		return fmt.Errorf("--no-token: --listen %s is reachable beyond this machine, where a token is required", listen)
	}
	return nil
}

// resolve returns the token clients must present: the configured one, or
// the one kept in dir, made now if there is none; "" with --no-token.
// dirErr is why there is no data directory, if there is none.
func (c *tokenConfig) resolve(dir string, dirErr error, log *slog.Logger) (string, error) {
	switch {
	case c.NoToken:
		log.Warn("running without a token (--no-token): every process on this machine, of any user, can connect and act as ahpd's user")
		return "", nil
	case c.Token != "":
		return c.Token, nil
	}
	if dirErr != nil {
		return "", errors.New("no data directory to keep the token in: set --data-dir, or give a token with --token or AHPD_TOKEN")
	}
	token, created, fixed, err := datadir.LoadOrCreateToken(dir)
	if err != nil {
		return "", err
	}
	if created {
		log.Info("made a token for clients", "file", tokenPath(dir))
	}
	if fixed {
		log.Warn("the token file was readable by other users: made it private (mode 0600); give clients a new token by deleting it", "file", tokenPath(dir))
	}
	return token, nil
}

func tokenPath(dir string) string { return filepath.Join(dir, datadir.TokenFile) }

// dataDir is the configured data directory, or the default one.
func (c *storeConfig) dataDir() (string, error) {
	if c.DataDir != "" {
		return c.DataDir, nil
	}
	return defaultDataDir()
}

// wsURL is the ws:// URL ahpd prints, with the token in the query (one of
// the places the host takes it from), so that it can be pasted into any
// client as is.
func wsURL(addr net.Addr, token string) string {
	u := "ws://" + addr.String() + "/"
	if token != "" {
		u += "?token=" + url.QueryEscape(token)
	}
	return u
}

// publishRuntime writes the runtime file local clients read to find this
// ahpd, and returns the func that removes it at stop. A failure is logged:
// clients can still be given the URL and token.
func publishRuntime(dir string, addr net.Addr, token string, log *slog.Logger) (remove func()) {
	rt := datadir.Runtime{URL: datadir.LocalURL(addr), Token: token, PID: os.Getpid()}
	if err := datadir.WriteRuntime(dir, rt); err != nil {
		log.Warn("cannot tell local clients where ahpd listens", "err", err)
		return func() {}
	}
	return func() {
		if err := datadir.RemoveRuntime(dir, rt); err != nil {
			log.Warn("cannot remove the runtime file", "err", err)
		}
	}
}
