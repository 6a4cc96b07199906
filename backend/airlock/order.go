package airlock

import (
	"log/slog"

	"github.com/airlock-dev/airlock/backend/store"
)

// serverOrder keeps the order servers were added in, in the database, for
// catalog.Options.Order (store.ServerOrder). A database it cannot read or
// write orders new servers by id, as before, and says so in the log.
func serverOrder(db *store.DB, log *slog.Logger) func(ids []string) map[string]uint64 {
	return func(ids []string) map[string]uint64 {
		out, err := db.ServerOrder(ids)
		if err != nil {
			log.Warn("keep the order servers were added in", "err", err)
		}
		return out
	}
}
