package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

const rolesUsage = `usage: airlock roles <command> [flags]

Manage permission roles: which downstream servers (and tools) their agents
may use. New agents get the role marked default; a superuser role grants
every server. Changes are written to the database; a running Airlock picks
them up at once.

every command takes:
  --data-dir DIR    the data directory (default $AIRLOCK_DATA_DIR, else
                    ~/.config/airlock); a running Airlock on it applies changes at once

commands:
  list    [--json]                                  every role with its grants
  add     NAME [--grant SERVER]... [--superuser] [--default] [--description D] [--json]
  grant   ROLE SERVER [--tool TOOL]                 grant a server (all its tools, prompts
                                                    and resources), or with --tool one tool
  revoke  ROLE SERVER [--tool TOOL]                 withdraw a server grant, or with --tool
                                                    withhold one tool of a granted server
  default ROLE                                      make ROLE the one new agents get
  rm      ROLE                                      delete a role no agent has
`

// RunRoles runs `airlock roles ...` against db.
func RunRoles(ctx context.Context, db *store.DB, knownServers func() []string, args []string, stdout, stderr io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, rolesUsage)
		return core.Errorf(core.EInvalid, "missing roles command").WithHint("see 'airlock roles -h'")
	}
	cmd, rest := args[0], args[1:]
	var run func(*authz.Service, []string, io.Writer) error
	switch cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, rolesUsage)
		return nil
	case "list", "ls":
		run = rolesList
	case "add":
		run = rolesAdd
	case "grant":
		run = func(s *authz.Service, a []string, w io.Writer) error {
			if err := rolesGrant(s, a, w, true); err != nil {
				return err
			}
			warnUnknownServer(knownServers, a, stderr)
			return nil
		}
	case "revoke":
		run = func(s *authz.Service, a []string, w io.Writer) error { return rolesGrant(s, a, w, false) }
	case "default":
		run = rolesDefault
	case "rm", "remove", "delete":
		run = rolesRemove
	default:
		return core.Errorf(core.EInvalid, "unknown roles command %q", cmd).WithHint("see 'airlock roles -h'")
	}
	svc, err := authz.New(store.NewAgents(db), authz.Options{})
	if err != nil {
		return err
	}
	return done(run(svc, rest, stdout))
}

func rolesList(svc *authz.Service, args []string, stdout io.Writer) error {
	c, fs := flagSet("roles list", "roles list [--json]\n\nList every role.")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return c.usageError("unexpected argument %q", pos[0])
	}
	roles, err := svc.Roles()
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, roles)
	}
	agents, err := svc.Agents()
	if err != nil {
		return err
	}
	count := map[string]int{}
	for _, a := range agents {
		count[a.Role]++
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tAGENTS\tSERVERS\tTOOL EXCEPTIONS\tNOTES")
	for _, r := range roles {
		servers := strings.Join(r.Servers, ",")
		if r.IsSuperuser {
			servers = "all"
		}
		var tools []string
		for _, t := range r.Tools {
			sign := "+"
			if !t.Allowed {
				sign = "-"
			}
			tools = append(tools, sign+t.Server+"/"+t.Tool)
		}
		var notes []string
		if r.IsDefault {
			notes = append(notes, "default")
		}
		if r.IsSuperuser {
			notes = append(notes, "superuser")
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Name, count[r.Name], orDash(servers), orDash(strings.Join(tools, " ")), strings.Join(notes, ", "))
	}
	return tw.Flush()
}

func rolesAdd(svc *authz.Service, args []string, stdout io.Writer) error {
	c, fs := flagSet("roles add", "roles add NAME [flags]\n\nAdd a role.")
	var grants repeated
	fs.Var(&grants, "grant", "a server the role grants (repeatable)")
	superuser := fs.Bool("superuser", false, "grant every server and tool")
	def := fs.Bool("default", false, "new agents get this role")
	desc := fs.String("description", "", "what the role is for")
	asJSON := fs.Bool("json", false, "print the role as JSON")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one role NAME")
	}
	r, err := svc.CreateRole(authz.RoleInput{Name: pos[0], Description: *desc, Superuser: *superuser, Default: *def, Servers: grants})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, r)
	}
	fmt.Fprintf(stdout, "added role %s\n", r.Name)
	return nil
}

func rolesGrant(svc *authz.Service, args []string, stdout io.Writer, grant bool) error {
	verb := "revoke"
	if grant {
		verb = "grant"
	}
	c, fs := flagSet("roles "+verb, "roles "+verb+" ROLE SERVER [--tool TOOL]")
	tool := fs.String("tool", "", "one tool of the server instead of the whole server")
	asJSON := fs.Bool("json", false, "print the role as JSON")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return c.usageError("want ROLE and SERVER")
	}
	role, server := pos[0], pos[1]
	var r authz.Role
	switch {
	case *tool != "":
		r, err = svc.SetRoleTool(role, server, *tool, &grant)
	case grant:
		r, err = svc.GrantServer(role, server)
	default:
		r, err = svc.RevokeServer(role, server)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, r)
	}
	what := "server " + server
	if *tool != "" {
		what = "tool " + server + "/" + *tool
	}
	if grant {
		fmt.Fprintf(stdout, "role %s: granted %s\n", r.Name, what)
		if *tool == "" {
			// A tool withheld before stays withheld: say so, or the grant
			// looks like it did not work.
			for _, t := range r.Tools {
				if t.Server == server && !t.Allowed {
					fmt.Fprintf(stdout, "  tool %s/%s stays withheld; 'airlock roles grant %s %s --tool %s' allows it\n", server, t.Tool, r.Name, server, t.Tool)
				}
			}
		}
	} else {
		fmt.Fprintf(stdout, "role %s: revoked %s\n", r.Name, what)
	}
	return nil
}

func rolesDefault(svc *authz.Service, args []string, stdout io.Writer) error {
	c, fs := flagSet("roles default", "roles default ROLE\n\nMake ROLE the role new agents get.")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one ROLE")
	}
	r, err := svc.SetDefaultRole(pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "new agents get role %s\n", r.Name)
	return nil
}

func rolesRemove(svc *authz.Service, args []string, stdout io.Writer) error {
	c, fs := flagSet("roles rm", "roles rm ROLE\n\nDelete a role no agent has.")
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("want exactly one ROLE")
	}
	if err := svc.DeleteRole(pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed role %s\n", pos[0])
	return nil
}

// warnUnknownServer says when roles grant named a server nobody configured
// (a typo grants nothing), as rules add does. The grant is kept: the server
// may be added later.
func warnUnknownServer(knownServers func() []string, args []string, stderr io.Writer) {
	if knownServers == nil {
		return
	}
	var pos []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--tool" || a == "-tool":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) < 2 {
		return
	}
	known := knownServers()
	if !slices.Contains(known, pos[1]) {
		fmt.Fprintf(stderr, "warning: no server named %q is configured (known: %s); the grant applies once one is\n", pos[1], strings.Join(known, ", "))
	}
}
