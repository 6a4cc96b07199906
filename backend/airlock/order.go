package airlock

import (
	"log/slog"

	"github.com/airlock-dev/airlock/backend/store"
)

// serverOrder keeps the order servers were added in, in the database, for
// catalog.Options.Order (store.ServerOrder). A database it cannot read or
// write orders new servers by id, as before, and says so in the log.
// inEffect reports whether the servers file is in effect: while it is not,
// the servers missing from ids keep their places.
func serverOrder(db *store.DB, log *slog.Logger, inEffect func() bool) func(ids []string) map[string]uint64 {
	return func(ids []string) map[string]uint64 {
		out, err := db.ServerOrder(ids, inEffect())
		if err != nil {
			log.Warn("keep the order servers were added in", "err", err)
		}
		return out
	}
}
