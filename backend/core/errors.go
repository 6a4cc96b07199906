package core

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// Error codes. They are stable strings: the UI, the CLI and agents branch on them.
const (
	EInvalid         = "invalid"          // the input is malformed or breaks a rule
	ENotFound        = "not_found"        // the named thing does not exist
	EConflict        = "conflict"         // it exists already, or was decided already
	EUnauthorized    = "unauthorized"     // no valid credential
	EForbidden       = "forbidden"        // a credential, but not allowed
	ETooLarge        = "too_large"        // a request over a documented limit
	ETimeout         = "timeout"          // something did not answer in time
	EUnavailable     = "unavailable"      // a downstream server is not running
	EInternal        = "internal"         // a bug or an environment failure
	EDenied          = "denied"           // a policy or a person refused the call
	EApprovalTimeout = "approval_timeout" // nobody decided in time: declined, never approved
	EExpired         = "expired"          // an approval lost to a restart
	EShuttingDown    = "shutting_down"    // Airlock stopped while the request ran: it may have had effects
)

// Error is an error a user or an agent sees: a code to branch on, a message
// to read and, where one helps, a hint saying what would change the outcome.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func (e *Error) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Hint)
	}
	return e.Code + ": " + e.Message
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns a copy of e carrying hint.
func (e *Error) WithHint(hint string) *Error {
	c := *e
	c.Hint = hint
	return &c
}

// ErrorCode returns the code of the first *Error in err's chain, EInternal for
// any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the human message of err: the *Error's message when
// there is one, the whole text otherwise.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// EDataDirUnwritable is the code of a data directory Airlock may not write:
// its permissions, or a read-only file system.
const EDataDirUnwritable = "data_dir_unwritable"

// DataDirError is err, met while doing what with the data directory dir:
// one that says Airlock may not write there gets EDataDirUnwritable and
// what to do (found by a new-user test: a read-only directory ended
// Airlock with "protect data dir: chmod ...: operation not permitted" and
// no way forward); any other is err with what.
func DataDirError(dir, what string, err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return (&Error{Code: EDataDirUnwritable, Message: fmt.Sprintf("Airlock cannot write its data directory %s: %v", dir, err)}).
			WithHint("make that directory and the files in it yours and writable, or give Airlock another one with --data-dir or AIRLOCK_DATA_DIR")
	}
	return fmt.Errorf("%s: %w", what, err)
}
