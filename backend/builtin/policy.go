package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// ECommandAsk is the code of an Ask verdict for a risky or unprovable
// command (the verdict is not a refusal; the code names why it asks).
const ECommandAsk = "command_ask"

// Check is the pipeline's policy stage for the built-in servers. For a
// tools/call to one of them it decodes the arguments and says early, with a
// reason, what the handler would refuse: bad arguments, a path outside the
// allowed folders or through a link out of one, an executable or an
// overwrite that was not asked for, a deny-listed command. A command on the
// ask list, or one it cannot prove safe, demands a person whatever the rules
// say. Requests for other servers pass. The handlers check everything again
// when they run.
func (b *Builtin) Check(_ context.Context, r *core.Request) core.Verdict {
	if r.Kind != core.KindToolCall {
		return core.Verdict{Outcome: core.Allow}
	}
	var want string
	switch r.Server {
	case ServerFileRead:
		want = ToolFileRead
	case ServerFileWrite:
		want = ToolFileWrite
	case ServerShellExec:
		want = ToolShellExec
	default:
		return core.Verdict{Outcome: core.Allow}
	}
	by := "builtin:" + r.Server
	cfg := b.cur.Load()
	if len(cfg.roots) == 0 {
		return core.Refusal(by, disabledError())
	}
	if r.Name != want {
		return core.Refusal(by, core.Errorf(EInvalidArguments, "server %s has no tool %q; its tool is %s", r.Server, r.Name, want))
	}
	var err error
	switch r.Server {
	case ServerFileRead:
		err = cfg.checkRead(r.Args)
	case ServerFileWrite:
		err = cfg.checkWrite(r.Args)
	case ServerShellExec:
		return cfg.checkShell(r.Args, by)
	}
	if err != nil {
		return core.Refusal(by, err)
	}
	return core.Verdict{Outcome: core.Allow, By: by, Reason: "the path is inside the allowed folders"}
}

// checkRead: the arguments decode and the path resolves, through the root,
// to something inside it.
func (c *config) checkRead(raw []byte) error {
	args, err := parseReadArgs(raw)
	if err != nil {
		return err
	}
	res, err := c.resolveFile(args.Path)
	if err != nil {
		return err
	}
	defer res.close()
	fi, err := res.root.Stat(res.rel)
	if err != nil {
		return res.fail(err)
	}
	if err := c.protectedErr(realPath(res), res.shown); err != nil {
		return err
	}
	return regularFile(res.shown, fi)
}

// checkWrite: the arguments decode, the content is allowed, the parent
// folder resolves inside the root (a missing one will be created there),
// and the target is neither a link nor, without overwrite, an existing
// file.
func (c *config) checkWrite(raw []byte) error {
	args, err := parseWriteArgs(raw)
	if err != nil {
		return err
	}
	if err := c.checkWriteContent(args); err != nil {
		return err
	}
	res, err := c.resolveFile(args.Path)
	if err != nil {
		return err
	}
	defer res.close()
	if res.rel == "." {
		return core.Errorf(ENotAFile, "%s is the allowed folder itself, not a file", res.shown)
	}
	if err := nearestDir(res, filepath.Dir(res.rel)); err != nil {
		return err
	}
	if err := c.protectedErr(realPath(res), res.shown); err != nil {
		return err
	}
	fi, err := res.root.Lstat(res.rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return res.fail(err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return (&core.Error{Code: ESymlinkTarget, Message: fmt.Sprintf("%s is a symbolic link; file_write never writes through one", res.shown)}).
			WithHint("write to the file the link points to, by its own path")
	case !fi.Mode().IsRegular():
		return regularFile(res.shown, fi)
	case !args.Overwrite:
		return existsError(res.shown)
	}
	return nil
}

// nearestDir checks the deepest existing folder on the way to dirRel: it
// must resolve inside the root (the rest will be created inside it).
func nearestDir(res *resolved, dirRel string) error {
	for {
		fi, err := res.root.Stat(dirRel)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil:
			return core.Errorf(ENotAFile, "%s is a file, not a folder", filepath.Join(res.dir.path, dirRel))
		case !errors.Is(err, fs.ErrNotExist) || dirRel == ".":
			return res.fail(err)
		}
		dirRel = filepath.Dir(dirRel)
	}
}

// checkShell classifies the command and checks cwd.
func (c *config) checkShell(raw []byte, by string) core.Verdict {
	args, err := parseExecArgs(raw)
	if err != nil {
		return core.Refusal(by, err)
	}
	script, err := shellScript(args.Command, args.Args)
	if err != nil {
		return core.Refusal(by, err)
	}
	dir, realDir, err := c.openCwd(args.Cwd)
	if err != nil {
		return core.Refusal(by, err)
	}
	dir.Close()
	cl := c.classifier.ClassifyAt(script, realDir)
	switch cl.Outcome {
	case core.Deny:
		return core.Refusal(by, deniedError(cl))
	case core.Ask:
		var reasons []string
		for _, f := range cl.Findings {
			reasons = append(reasons, f.Reason)
			if len(reasons) == 3 {
				break
			}
		}
		if more := len(cl.Findings) - len(reasons); more > 0 {
			reasons = append(reasons, fmt.Sprintf("and %d more", more))
		}
		return core.Verdict{Outcome: core.Ask, Forced: true, By: by, Code: ECommandAsk,
			Reason: "shell_exec: " + strings.Join(reasons, "; "),
			Hint:   "a person must approve this command, whatever the rules say"}
	}
	return core.Verdict{Outcome: core.Allow, By: by, Reason: "no deny or ask rule matches the command"}
}
