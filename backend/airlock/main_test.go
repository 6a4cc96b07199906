package airlock_test

import (
	"os"
	"testing"

	"github.com/airlock-dev/airlock/backend/airlock"
)

func TestMain(m *testing.M) {
	airlock.TuneRuntime() // as the binary does
	os.Exit(m.Run())
}
