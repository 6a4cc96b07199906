//go:build !unix

// Package proc supervises child processes in their own process groups. It is
// implemented for Unix systems only.
package proc

import (
	"context"
	"errors"
	"io"
	"time"
)

// Spec says what to run; see the Unix implementation.
type Spec struct {
	Path       string
	Args       []string
	Dir        string
	Env        []string
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer
	StdinPipe  bool
	StdoutPipe bool
	KillGrace  time.Duration
	WaitDelay  time.Duration
	Restrict   func() error
}

// Exit is how a process ended.
type Exit struct {
	Code    int
	Stopped bool
	Err     error
}

// ShellCode is the exit status.
func (e Exit) ShellCode() int { return e.Code }

// Process is a started child process.
type Process struct{}

// ErrUnsupported is returned by Start on systems without process groups.
var ErrUnsupported = errors.New("proc: process supervision is implemented for Unix systems only")

// Start fails on this system.
func Start(context.Context, Spec) (*Process, error) { return nil, ErrUnsupported }

// PID returns 0.
func (p *Process) PID() int { return 0 }

// Stdin returns nil.
func (p *Process) Stdin() io.WriteCloser { return nil }

// Stdout returns nil.
func (p *Process) Stdout() io.ReadCloser { return nil }

// Wait returns at once.
func (p *Process) Wait() Exit { return Exit{Code: -1} }

// Stop returns at once.
func (p *Process) Stop(time.Duration) Exit { return Exit{Code: -1} }
