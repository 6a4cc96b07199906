package config

import (
	"path/filepath"
	"runtime"

	"github.com/airlock-dev/airlock/backend/core"
)

// DataDirEnv names the environment variable that overrides the data directory.
const DataDirEnv = "AIRLOCK_DATA_DIR"

// DefaultDataDir returns where Airlock keeps its data: $AIRLOCK_DATA_DIR when
// set, else an "airlock" directory in the user's config directory, as
// os.UserConfigDir defines it (on Linux $XDG_CONFIG_HOME, else ~/.config). It
// reads the environment only through getenv, so that tests can pass their own.
func DefaultDataDir(getenv func(string) string) (string, error) {
	return defaultDataDir(runtime.GOOS, getenv)
}

func defaultDataDir(goos string, getenv func(string) string) (string, error) {
	if d := getenv(DataDirEnv); d != "" {
		return filepath.Abs(d)
	}
	var base string
	switch goos {
	case "windows":
		base = getenv("AppData")
		if base == "" {
			return "", core.Errorf(core.EInvalid, "%%AppData%% is not set").
				WithHint("set " + DataDirEnv + " or pass --data-dir")
		}
	case "darwin", "ios":
		home := getenv("HOME")
		if home == "" {
			return "", core.Errorf(core.EInvalid, "$HOME is not set").
				WithHint("set " + DataDirEnv + " or pass --data-dir")
		}
		base = filepath.Join(home, "Library", "Application Support")
	case "plan9":
		home := getenv("home")
		if home == "" {
			return "", core.Errorf(core.EInvalid, "$home is not set").
				WithHint("set " + DataDirEnv + " or pass --data-dir")
		}
		base = filepath.Join(home, "lib")
	default:
		base = getenv("XDG_CONFIG_HOME")
		if base == "" || !filepath.IsAbs(base) {
			// The XDG spec says a relative value is invalid and is ignored.
			home := getenv("HOME")
			if home == "" {
				return "", core.Errorf(core.EInvalid, "neither $XDG_CONFIG_HOME nor $HOME is set").
					WithHint("set " + DataDirEnv + " or pass --data-dir")
			}
			base = filepath.Join(home, ".config")
		}
	}
	return filepath.Join(base, "airlock"), nil
}
