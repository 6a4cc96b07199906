package api_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/api/tsgen"
)

// The frontend's types and client are generated from the facade: when a
// Go method, parameter or type changes, the committed TypeScript must be
// regenerated (`go generate ./backend/api`), or this test fails.
func TestTypeScriptIsCurrent(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Dir(file)
	var areas []tsgen.Area
	for _, a := range api.New(api.Deps{}).Areas() {
		areas = append(areas, tsgen.Area{Name: a.Name, Value: a.Value})
	}
	want, err := tsgen.Generate(tsgen.Options{Areas: areas, Events: api.EventPayloads(), SourceDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "..", "..", "frontend", "src", "lib", "api", "generated.ts")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s is stale: run `go generate ./backend/api` and commit the result", path)
	}
}
