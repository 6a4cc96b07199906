package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"gorm.io/gorm"
)

// serverOrderKey is the setting that keeps the order servers were added
// in: a name two --no-prefix servers would expose stays with the one added
// first, across restarts too.
const serverOrderKey = "catalog.serverOrder"

func (db *DB) serverOrder() (map[string]uint64, error) {
	kept := map[string]uint64{}
	v, ok, err := db.Setting(serverOrderKey)
	if err != nil || !ok {
		return kept, err
	}
	if err := json.Unmarshal([]byte(v), &kept); err != nil {
		return map[string]uint64{}, fmt.Errorf("read the order servers were added in: %w", err)
	}
	return kept, nil
}

// inTx runs fn on the order in one transaction (BEGIN IMMEDIATE): the CLI
// and the running Airlock change it from two processes (found by a code
// review: a read, change and write of the whole order could lose a
// server added meanwhile).
func (db *DB) inTx(fn func(tx *DB) error) error {
	return db.Transaction(func(tx *gorm.DB) error { return fn(&DB{DB: tx, Path: db.Path}) })
}

func (db *DB) setServerOrder(order map[string]uint64) error {
	b, _ := json.Marshal(order)
	return db.SetSetting(serverOrderKey, string(b))
}

// ServerOrder returns the place of each of the servers configured now
// (ids, sorted): the places they had, new ids after them in the order
// given. With forget, ids no longer configured are forgotten (one added
// again comes last); without it (the servers file cannot be read, so ids
// are not all the servers there are), they keep their places (found by a
// code review: a broken servers.json at start-up erased the order).
func (db *DB) ServerOrder(ids []string, forget bool) (out map[string]uint64, err error) {
	txErr := db.inTx(func(tx *DB) error {
		out, err = tx.serverOrderTx(ids, forget)
		return nil // a damaged order is rewritten, not rolled back
	})
	if err == nil {
		err = txErr
	}
	return out, err
}

func (db *DB) serverOrderTx(ids []string, forget bool) (map[string]uint64, error) {
	kept, err := db.serverOrder()
	out := make(map[string]uint64, len(ids))
	var last uint64
	for _, n := range kept {
		last = max(last, n)
	}
	for id, n := range kept {
		if !forget || slices.Contains(ids, id) {
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
		if werr := db.setServerOrder(out); werr != nil && err == nil {
			err = werr
		}
	}
	return out, err
}

// ForgetServerOrder forgets the places of removed servers: added again,
// each comes last (`airlock servers rm` while no Airlock runs).
func (db *DB) ForgetServerOrder(ids ...string) error {
	return db.inTx(func(tx *DB) error {
		kept, err := tx.serverOrder()
		if err != nil {
			return err
		}
		n := len(kept)
		for _, id := range ids {
			delete(kept, id)
		}
		if len(kept) == n {
			return nil
		}
		return tx.setServerOrder(kept)
	})
}

// AddServerOrder places server id after every server placed so far, unless
// it has a place: `airlock servers add` records the order while no Airlock
// runs, or before it applies two additions at once (found by a regression
// test: those were ordered by id).
func (db *DB) AddServerOrder(id string) error {
	return db.inTx(func(tx *DB) error {
		kept, err := tx.serverOrder()
		if err != nil {
			return err
		}
		if _, ok := kept[id]; ok {
			return nil
		}
		var last uint64
		for _, n := range kept {
			last = max(last, n)
		}
		kept[id] = last + 1
		return tx.setServerOrder(kept)
	})
}
