package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/tokenfile"
)

var tokenCmd = command{name: "token", usage: `token [--rotate]

Print the token agents use to connect to Airlock (created on first use).
Give it to an agent as "Authorization: Bearer <token>", or to
'airlock bridge --token'. --rotate replaces it; agents using the old one must
be given the new one.`}

// TokenCmd runs `airlock token [--rotate]`: it prints the agent token,
// creating it on first use, or replaces it with a new one.
func TokenCmd(dataDir string, args []string, stdout io.Writer) error {
	fs := tokenCmd.newFlags(&dataDir)
	rotate := fs.Bool("rotate", false, "replace the token with a new one")
	pos, _, err := tokenCmd.parse(fs, args, stdout)
	if err != nil {
		return done(err)
	}
	if len(pos) > 0 {
		return tokenCmd.usageError("unexpected argument %q", pos[0])
	}
	if dataDir == "" {
		return core.Errorf(core.EInvalid, "no data directory").WithHint("pass --data-dir or set $" + config.DataDirEnv)
	}
	if err := sharedTokenHasAgent(dataDir); err != nil {
		return err
	}
	var tok string
	if *rotate {
		tok, err = tokenfile.RotateToken(dataDir)
		if err == nil {
			err = adoptToken(dataDir, tok)
		}
	} else {
		tok, err = tokenfile.AgentToken(dataDir, true)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}

// sharedTokenHasAgent refuses to hand out the shared token once the agent
// "default" it belongs to was deleted: it works for nobody then.
func sharedTokenHasAgent(dataDir string) error {
	if _, err := os.Stat(filepath.Join(dataDir, store.FileName)); errors.Is(err, os.ErrNotExist) {
		return nil // a new data directory: Airlock makes the agent "default"
	}
	return withAgents(dataDir, func(svc *authz.Service) error {
		if _, err := svc.Agent(authz.DefaultAgentID); core.ErrorCode(err) == core.ENotFound {
			return core.Errorf(core.ENotFound, "the shared agent token belonged to the agent \"default\", which was deleted: it works for nobody now").
				WithHint("give each client an agent of its own: 'airlock agents add NAME' prints its token")
		} else if err != nil {
			return err
		}
		return nil
	})
}

// withAgents runs fn with the agents service of the data directory.
func withAgents(dataDir string, fn func(*authz.Service) error) error {
	db, err := store.Open(filepath.Join(dataDir, store.FileName))
	if err != nil {
		return err
	}
	defer db.Close()
	svc, err := authz.New(store.NewAgents(db), authz.Options{})
	if err != nil {
		return err
	}
	return fn(svc)
}

// adoptToken makes tok the token of the agent "default" in the database,
// so that the old one stops working (main then tells a running Airlock).
func adoptToken(dataDir, tok string) error {
	return withAgents(dataDir, func(svc *authz.Service) error { return svc.AdoptLegacyToken(tok) })
}
