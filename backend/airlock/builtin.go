package airlock

import (
	"context"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
)

// startBuiltin builds the built-in file and shell servers and keeps them in
// the catalogue while a folder is allowed (and they are switched on): off
// by default, on as soon as the user allows a folder, from the UI, the CLI
// (`airlock builtin allow-path DIR`) or --allow-path.
func (in *Instance) startBuiltin(ctx context.Context, o Options) error {
	var mu sync.Mutex // serialises sync: changes arrive from the UI and the watcher
	sync := func() {
		mu.Lock()
		defer mu.Unlock()
		s := in.builtin.Settings()
		for id, srv := range in.builtin.Servers() {
			on := in.builtin.Enabled() && s.On(id)
			_, present := in.cat.ServerStatus(id)
			switch {
			case on && !present:
				in.cat.AddInProcess(id, srv, false)
			case !on && present:
				in.cat.RemoveInProcess(id)
			}
		}
	}
	var err error
	in.builtin, err = builtin.New(builtin.Options{
		Store:   in.db,
		Roots:   o.AllowPaths,
		DataDir: o.DataDir,
		Logger:  o.Logger,
		OnChange: func(ov builtin.Overview) {
			in.Hub.Emit(core.EventBuiltinChanged, ov)
			in.background(sync)
		},
	})
	if err != nil {
		return err
	}
	in.background(func() { in.builtin.Watch(ctx, time.Second) })
	sync()
	return nil
}
