package airlock

import (
	"encoding/json"
	"log/slog"
	"maps"

	"github.com/airlock-dev/airlock/backend/store"
)

// serverOrderKey is the setting that keeps the order servers were added
// in (catalog.Options.Order).
const serverOrderKey = "catalog.serverOrder"

// serverOrder keeps the order servers were added in, in the database, for
// catalog.Options.Order: a name two --no-prefix servers would expose stays
// with the one added first, across restarts too. A database it cannot
// read or write orders by id, as before, and says so in the log.
func serverOrder(db *store.DB, log *slog.Logger) func(ids []string) map[string]uint64 {
	return func(ids []string) map[string]uint64 {
		kept := map[string]uint64{}
		if v, ok, err := db.Setting(serverOrderKey); err != nil {
			log.Warn("read the order servers were added in", "err", err)
		} else if ok {
			if err := json.Unmarshal([]byte(v), &kept); err != nil {
				log.Warn("read the order servers were added in", "err", err)
				kept = map[string]uint64{}
			}
		}
		out := make(map[string]uint64, len(ids))
		var last uint64
		for _, n := range kept {
			last = max(last, n)
		}
		for _, id := range ids {
			if n, ok := kept[id]; ok {
				out[id] = n
			}
		}
		for _, id := range ids {
			if _, ok := out[id]; !ok {
				last++
				out[id] = last
			}
		}
		if !maps.Equal(out, kept) {
			b, _ := json.Marshal(out)
			if err := db.SetSetting(serverOrderKey, string(b)); err != nil {
				log.Warn("keep the order servers were added in", "err", err)
			}
		}
		return out
	}
}
