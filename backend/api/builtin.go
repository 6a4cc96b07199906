package api

import "github.com/airlock-dev/airlock/backend/builtin"

// Builtin is the Built-in tools screen: the folders the file and shell
// tools may use, the shell's deny and ask lists, the environment allow
// list, timeouts and size caps. A change applies to the very next call.
type Builtin struct{ d Deps }

// Get returns the settings in force, the folders, and the defaults.
func (b *Builtin) Get() (builtin.Overview, error) { return b.d.Builtin.Get(), nil }

// Update replaces the settings (invalid ones are refused, nothing changes).
func (b *Builtin) Update(s builtin.Settings) (builtin.Overview, error) { return b.d.Builtin.Update(s) }

// AllowPath lets the built-in tools use a folder (and turns them on).
func (b *Builtin) AllowPath(dir string) (builtin.Overview, error) { return b.d.Builtin.AllowPath(dir) }

// RemovePath takes a folder away from the built-in tools.
func (b *Builtin) RemovePath(dir string) (builtin.Overview, error) {
	return b.d.Builtin.RemovePath(dir)
}

// Classify says what the shell policy makes of a command: allowed, asked
// (and which rule) or refused (and which rule).
func (b *Builtin) Classify(command string, args []string) (builtin.Classification, error) {
	return b.d.Builtin.ClassifyCommand(command, args)
}

// Servers returns the ids of the built-in servers (file-read, file-write,
// shell-exec), each of which settings.off can switch off.
func (b *Builtin) Servers() ([]string, error) { return builtin.ServerIDs(), nil }
