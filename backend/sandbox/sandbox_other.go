//go:build !linux

package sandbox

// Sandbox does nothing on this system.
type Sandbox struct{ hidden []string }

// New returns a sandbox that enforces nothing here.
func New(hidden []string) *Sandbox { return &Sandbox{hidden: realPaths(hidden)} }

// Status says that nothing enforces the sandbox on this system.
func (s *Sandbox) Status() Status {
	return Status{Reason: "Airlock enforces it with Landlock, which only Linux has", Hidden: s.hidden}
}

// Restrict does nothing.
func (s *Sandbox) Restrict() error { return nil }
