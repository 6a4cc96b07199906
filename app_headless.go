//go:build headless

package main

import (
	"context"
	"io"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/core"
)

// desktop is unavailable in a headless build (`-tags headless`): a cgo-free
// binary without GTK/WebKit for servers, which runs `airlock serve` and every
// other command.
func desktop(ctx context.Context, o airlock.Options, stdout, stderr io.Writer) error {
	return core.Errorf(core.EInvalid, "this is a headless build of Airlock without the desktop window: run `airlock serve`")
}
