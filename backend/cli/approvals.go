package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/instance"
)

const approvalsUsage = `usage: airlock approvals <command> [flags]

The calls waiting for a person, as the approval dialog shows them. They
wait in the running Airlock, so these commands ask the Airlock running on
the data directory (start one with 'airlock serve').

commands:
  list [--json]                 the waiting calls, oldest first
  show ID [--json]              one waiting call with its arguments
  approve ID                    let it through, once
  decline ID [--reason TEXT]    refuse it (the reason goes to the agent)

Rules (airlock rules) decide which calls need no one; a call that waits too
long is declined.
`

// RunApprovals runs `airlock approvals ...` against the Airlock running on
// dataDir.
func RunApprovals(ctx context.Context, dataDir string, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, approvalsUsage)
		return core.Errorf(core.EInvalid, "missing approvals command").WithHint("see 'airlock approvals -h'")
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	call := func(method string, out any, args ...any) error {
		err := instance.Call(ctx, dataDir, "Approvals."+method, args, out)
		if core.ErrorCode(err) == core.EUnavailable {
			return core.Errorf(core.EUnavailable, "%s", core.ErrorMessage(err)).
				WithHint("waiting calls are in the running Airlock: start it with 'airlock serve' (or the desktop app) on this data directory")
		}
		return err
	}
	cmd, rest := args[0], args[1:]
	fs := flag.NewFlagSet("approvals "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	reason := fs.String("reason", "", "why (decline): the agent reads it")
	switch cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, approvalsUsage)
		return nil
	case "list", "ls", "show", "approve", "decline":
	default:
		fmt.Fprint(stderr, approvalsUsage)
		return core.Errorf(core.EInvalid, "unknown approvals command %q", cmd).WithHint("see 'airlock approvals -h'")
	}
	if err := parseRulesFlags(fs, rest); err != nil {
		return err
	}
	id := fs.Arg(0)
	if cmd != "list" && cmd != "ls" && (fs.NArg() != 1 || id == "") {
		return core.Errorf(core.EInvalid, "approvals %s: want exactly one ID", cmd).WithHint("see the ids with 'airlock approvals list'")
	}
	switch cmd {
	case "approve":
		if err := call("Approve", nil, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "approved %s\n", id)
		return nil
	case "decline":
		if err := call("Decline", nil, id, *reason); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "declined %s\n", id)
		return nil
	}
	var pending []hitl.Approval
	if err := call("Pending", &pending); err != nil {
		return err
	}
	if cmd == "show" {
		for _, a := range pending {
			if a.ID == id {
				if *asJSON {
					return writeJSON(stdout, a)
				}
				return showApproval(stdout, a)
			}
		}
		return core.Errorf(core.ENotFound, "no call waits with id %s", id).WithHint("it may have been decided or timed out; see 'airlock approvals list'")
	}
	if *asJSON {
		return writeJSON(stdout, pending)
	}
	if len(pending) == 0 {
		fmt.Fprintln(stdout, "no call waits for a person")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tSERVER\tNAME\tRISK\tDECLINED IN")
	now := time.Now()
	for _, a := range pending {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, cmpOr(a.Agent, "-"), a.Server, a.Tool, cmpOr(a.Risk, "-"), a.Deadline.Sub(now).Round(time.Second))
	}
	return tw.Flush()
}

// showApproval prints one waiting call: who asks, for what, why, with its
// arguments.
func showApproval(w io.Writer, a hitl.Approval) error {
	fmt.Fprintf(w, "%s: %s %s of %s", a.ID, cmpOr(a.Kind, "tools/call"), a.Tool, a.Server)
	if a.Agent != "" {
		fmt.Fprintf(w, ", by %s", a.Agent)
	}
	fmt.Fprintln(w)
	if a.Risk != "" {
		fmt.Fprintf(w, "risk: %s\n", a.Risk)
	}
	if a.Warning != "" {
		fmt.Fprintf(w, "warning: %s\n", a.Warning)
	}
	if a.Reason != "" {
		fmt.Fprintf(w, "why you're asked: %s\n", a.Reason)
	}
	fmt.Fprintf(w, "declined at %s unless you decide\n", a.Deadline.Local().Format(time.Kitchen))
	var pretty strings.Builder
	enc := json.NewEncoder(&pretty)
	enc.SetIndent("", "  ")
	if err := enc.Encode(a.Arguments); err != nil {
		return err
	}
	fmt.Fprintf(w, "arguments:\n%s", pretty.String())
	return nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
