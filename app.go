//go:build !headless

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/instance"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// App adapts the Wails lifecycle and window to the backend. It owns the only
// context Wails accepts for runtime calls; events reach the window through it.
type App struct {
	mu     sync.Mutex
	ctx    context.Context // set by startup; nil before and after
	notify bool            // the desktop's notification service is there
	log    *slog.Logger
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
		a.notifyApproval(ctx, payload)
	}
}

// notifyApproval shows a desktop notification for a waiting call, for the
// person who is looking at another window.
func (a *App) notifyApproval(ctx context.Context, payload any) {
	a.mu.Lock()
	notify := a.notify
	a.mu.Unlock()
	ap, ok := payload.(hitl.Approval)
	if !notify || !ok {
		return
	}
	err := runtime.SendNotification(ctx, runtime.NotificationOptions{
		ID:    ap.ID,
		Title: "Airlock: approval needed",
		Body:  fmt.Sprintf("%s wants to call %s on %s", ap.Agent, ap.Tool, ap.Server),
	})
	if err != nil {
		a.log.Warn("desktop notification failed", "err", err)
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

func (a *App) startup(ctx context.Context) {
	// Desktop notifications need the session's notification service; without
	// one the window still comes to the front.
	err := runtime.InitializeNotifications(ctx)
	if err != nil {
		a.log.Info("no desktop notifications", "err", err)
	}
	notify := err == nil && runtime.IsNotificationAvailable(ctx)
	if notify {
		// Clicking the notification shows the window with the dialog.
		runtime.OnNotificationResponse(ctx, func(runtime.NotificationResult) { a.raise(ctx) })
	}
	a.mu.Lock()
	a.ctx, a.notify = ctx, notify
	a.mu.Unlock()
}

func (a *App) shutdown(context.Context) {
	a.mu.Lock()
	a.ctx = nil
	a.mu.Unlock()
}

// focus raises the window when a second launch asks for it.
func (a *App) focus() {
	a.mu.Lock()
	ctx := a.ctx
	a.mu.Unlock()
	if ctx != nil {
		a.raise(ctx)
	}
}

// bindings are the facade's areas, bound to the window as
// window.go.api.<Area>.<Method>.
func bindings(f *api.Facade) []any {
	var out []any
	for _, a := range f.Areas() {
		out = append(out, a.Value)
	}
	return out
}

func desktop(ctx context.Context, o airlock.Options, stdout, stderr io.Writer) error {
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	app := &App{log: o.Logger}
	o.OnFocus = app.focus
	dataDir := o.DataDir
	in, err := airlock.Start(ctx, o)
	if core.ErrorCode(err) == core.EConflict && strings.Contains(err.Error(), "already running") {
		// A second launch on the same data directory: show the first
		// instead of starting a second gateway.
		if ferr := instance.FocusRunning(dataDir); errors.Is(ferr, instance.ErrNoWindow) {
			return ferr
		} else if ferr != nil {
			return fmt.Errorf("%w (and it could not be brought to the front: %v)", err, ferr)
		}
		fmt.Fprintln(stdout, "Airlock is already running on", dataDir, "- brought its window to the front.")
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	stopSink := in.Hub.AddSink(app)
	defer stopSink()
	printEndpoints(stdout, in)
	warnConfig(stderr, in)
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
		Bind:             bindings(in.API),
		ErrorFormatter:   func(err error) any { return api.ToError(err) },
	})
}
