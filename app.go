//go:build !headless

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// App adapts the Wails lifecycle and window to the backend. It owns the only
// context Wails accepts for runtime calls; events reach the window through it.
type App struct {
	opts   airlock.Options
	bound  *api.API // the facade Wails binds; filled in by startup
	stdout io.Writer

	mu  sync.Mutex
	ctx context.Context // set by startup; nil before and after
	in  *airlock.Instance
}

// Emit forwards a backend event to the window. An approval request also
// brings the window to the front.
func (a *App) Emit(name string, payload any) {
	a.mu.Lock()
	ctx := a.ctx
	a.mu.Unlock()
	if ctx == nil {
		return
	}
	runtime.EventsEmit(ctx, name, payload)
	if name == core.EventApprovalRequested {
		a.raise(ctx)
	}
}

// raise shows, unminimises and briefly pins the window so that the person
// sees the approval; window managers treat it as a request for attention.
func (a *App) raise(ctx context.Context) {
	runtime.WindowShow(ctx)
	runtime.WindowUnminimise(ctx)
	runtime.WindowSetAlwaysOnTop(ctx, true)
	time.AfterFunc(1500*time.Millisecond, func() { runtime.WindowSetAlwaysOnTop(ctx, false) })
}

// startup runs once the single-instance lock is held: only then is it safe
// to open the data directory and start the gateway.
func (a *App) startup(ctx context.Context) {
	in, err := airlock.Start(ctx, a.opts)
	if err != nil {
		runtime.MessageDialog(ctx, runtime.MessageDialogOptions{Type: runtime.ErrorDialog, Title: "Airlock cannot start", Message: err.Error()})
		runtime.Quit(ctx)
		return
	}
	*a.bound = *in.API
	a.mu.Lock()
	a.ctx, a.in = ctx, in
	a.mu.Unlock()
	in.Hub.AddSink(a)
	printEndpoints(a.stdout, in)
}

func (a *App) shutdown(context.Context) {
	a.mu.Lock()
	in := a.in
	a.ctx = nil
	a.mu.Unlock()
	if in != nil {
		in.Close()
	}
}

func desktop(ctx context.Context, dataDir, addr string, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	app := &App{
		opts:   airlock.Options{DataDir: dataDir, Addr: addr, UI: uiFS(), Logger: log},
		bound:  new(api.API),
		stdout: stdout,
	}
	lockID := sha256.Sum256([]byte(dataDir))
	return wails.Run(&options.App{
		Title:            "Airlock",
		Width:            1280,
		Height:           820,
		MinWidth:         900,
		MinHeight:        600,
		AssetServer:      &assetserver.Options{Assets: uiFS()},
		BackgroundColour: &options.RGBA{R: 250, G: 250, B: 251, A: 255},
		OnStartup:        app.startup,
		OnShutdown:       app.shutdown,
		// The facade is filled in by startup, before the page can call it.
		Bind:           []any{app.bound},
		ErrorFormatter: func(err error) any { return api.ToError(err) },
		// A second launch on the same data directory focuses this window
		// instead of starting a second gateway.
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId: "dev.airlock." + hex.EncodeToString(lockID[:8]),
			OnSecondInstanceLaunch: func(options.SecondInstanceData) {
				app.mu.Lock()
				c := app.ctx
				app.mu.Unlock()
				if c != nil {
					app.raise(c)
				}
			},
		},
	})
}
