package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-dev/airlock/backend/core"
)

// MCPSessions keeps the agents' MCP sessions across restarts of Airlock
// (m0012MCPSessions). A session is found by its id, which is kept only
// hashed: the database holds nothing a client could present.
type MCPSessions struct{ db *DB }

// NewMCPSessions returns the MCP sessions kept in db.
func NewMCPSessions(db *DB) *MCPSessions { return &MCPSessions{db: db} }

// MCPSessionKeep is how long a session no running Airlock has seen is kept.
const MCPSessionKeep = 7 * 24 * time.Hour

func sessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// Save keeps session id, opened with credential (the gateway's hash of the
// credential), in state (the protocol's session state, as JSON).
func (m *MCPSessions) Save(id, credential string, state []byte) error {
	now := time.Now().UTC()
	err := m.db.Exec(`INSERT INTO mcp_sessions (id_hash, credential, state, created_at, seen_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(id_hash) DO UPDATE SET state = excluded.state, seen_at = excluded.seen_at`,
		sessionKey(id), credential, string(state), now, now).Error
	if err != nil {
		return fmt.Errorf("keep MCP session: %w", err)
	}
	return nil
}

// Load returns what is kept of session id, if it is.
func (m *MCPSessions) Load(id string) (k core.KeptSession, ok bool, err error) {
	var row struct {
		Credential string
		State      string
		Bound      string
		Subs       string
	}
	res := m.db.Raw(`SELECT credential, state, bound, subs FROM mcp_sessions WHERE id_hash = ?`, sessionKey(id)).Scan(&row)
	if res.Error != nil {
		return k, false, fmt.Errorf("read MCP session: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return k, false, nil
	}
	k = core.KeptSession{Credential: row.Credential, State: []byte(row.State), Bound: row.Bound}
	if row.Subs != "" {
		if err := json.Unmarshal([]byte(row.Subs), &k.Subs); err != nil {
			return k, false, fmt.Errorf("read MCP session: its subscriptions: %w", err)
		}
	}
	return k, true, nil
}

// Subscriptions keeps the resources session id is subscribed to (server,
// URI), so that the next run subscribes them again.
func (m *MCPSessions) Subscriptions(id string, subs [][2]string) error {
	b := []byte("")
	if len(subs) > 0 {
		var err error
		if b, err = json.Marshal(subs); err != nil {
			return err
		}
	}
	if err := m.db.Exec(`UPDATE mcp_sessions SET subs = ? WHERE id_hash = ?`, string(b), sessionKey(id)).Error; err != nil {
		return fmt.Errorf("keep the subscriptions of an MCP session: %w", err)
	}
	return nil
}

// Bind keeps the agent session (authenticate's) bound to session id, ""
// for none.
func (m *MCPSessions) Bind(id, bound string) error {
	if err := m.db.Exec(`UPDATE mcp_sessions SET bound = ? WHERE id_hash = ?`, bound, sessionKey(id)).Error; err != nil {
		return fmt.Errorf("keep the binding of an MCP session: %w", err)
	}
	return nil
}

// Delete forgets session id (it ended).
func (m *MCPSessions) Delete(id string) error {
	if err := m.db.Exec(`DELETE FROM mcp_sessions WHERE id_hash = ?`, sessionKey(id)).Error; err != nil {
		return fmt.Errorf("forget MCP session: %w", err)
	}
	return nil
}

// Seen marks the sessions ids as seen now (Airlock stops with them open).
func (m *MCPSessions) Seen(ids []string) error {
	now := time.Now().UTC()
	err := m.db.Transaction(func(tx *gorm.DB) error {
		for _, id := range ids {
			if err := tx.Exec(`UPDATE mcp_sessions SET seen_at = ? WHERE id_hash = ?`, now, sessionKey(id)).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark MCP sessions seen: %w", err)
	}
	return nil
}

// Prune forgets the sessions not seen since before.
func (m *MCPSessions) Prune(before time.Time) error {
	if err := m.db.Exec(`DELETE FROM mcp_sessions WHERE seen_at < ?`, before.UTC()).Error; err != nil {
		return fmt.Errorf("prune MCP sessions: %w", err)
	}
	return nil
}
