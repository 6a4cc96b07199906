// Package store opens Airlock's database and holds the repositories over it.
//
// SQLite (pure Go, github.com/glebarez/sqlite) is the embedded default; the
// schema changes only through the versioned migrations in this package. It
// imports core and the domain packages whose repositories it implements
// (hitl), never the gateway or anything above it.
package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// DB is an open Airlock database.
type DB struct {
	*gorm.DB
	Path string
}

// FileName is the database file inside the data directory.
const FileName = "airlock.db"

// DSN returns the SQLite DSN for path with the pragmas Airlock relies on. The
// glebarez driver honours only `_pragma=` parameters. The page cache is
// 1 MiB (SQLite's default is 2): the audit log appends at the end of its
// table, which a small cache serves as well (BenchmarkAuditLogFlush), and
// it took 2-2.5 MB of Airlock's peak RSS under the 200-session load; a
// week's timeline is about 4 % slower (BenchmarkTimeline/week).
func DSN(path string) string {
	// The path is part of a URI: '#' would end it, '?' start the query
	// and '%' an escape (a data directory such as ~/C#/airlock opened a
	// database elsewhere). SQLite decodes %HH in URI file names.
	path = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
	return "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-1000)&_txlock=immediate"
}

// Open opens (creating if needed) the SQLite database at path and migrates it
// to the newest schema.
func Open(path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), fsutil.DirMode); err != nil {
		return nil, core.DataDirError(filepath.Dir(path), "create data dir", err)
	}
	// The database holds the audit log and token hashes: the user's alone.
	// SQLite creates it (and its -wal and -shm files, which copy the main
	// file's mode) with the umask's 0644; create it 0600 first, and tighten
	// one made by an older version.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, fsutil.FileMode)
	if err != nil {
		return nil, core.DataDirError(filepath.Dir(path), "open db "+path, err)
	}
	if err := f.Chmod(fsutil.FileMode); err != nil {
		f.Close()
		return nil, core.DataDirError(filepath.Dir(path), "open db "+path, err)
	}
	f.Close()
	for _, side := range []string{path + "-wal", path + "-shm"} {
		if err := os.Chmod(side, fsutil.FileMode); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, core.DataDirError(filepath.Dir(path), "open db "+path, err)
		}
	}
	gdb, err := gorm.Open(sqlite.Open(DSN(path)), &gorm.Config{
		TranslateError: true,
		Logger:         logger.Discard,
		NowFunc:        nowUTC,
	})
	if err != nil {
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	sqlDB, err := gdb.DB()
	if err != nil {
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	// One writer at a time is what SQLite allows anyway; a single connection
	// also makes the pragmas above hold for every statement.
	sqlDB.SetMaxOpenConns(1)
	db := &DB{DB: gdb, Path: path}
	if err := Migrate(gdb); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	return db, nil
}

// Close closes the database.
func (db *DB) Close() error {
	sqlDB, err := db.DB.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// JournalMode reports SQLite's journal mode ("wal" when Open did its job).
func (db *DB) JournalMode() (string, error) {
	var mode string
	err := db.Raw("PRAGMA journal_mode").Scan(&mode).Error
	return strings.ToLower(mode), err
}

func isNotFound(err error) bool { return errors.Is(err, gorm.ErrRecordNotFound) }
