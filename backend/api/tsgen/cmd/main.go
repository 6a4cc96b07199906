// Command cmd writes frontend/src/lib/api/generated.ts from the Go facade:
// `go generate ./backend/api` runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/api/tsgen"
)

func main() {
	out := flag.String("out", "", "the TypeScript file to write (stdout when empty)")
	src := flag.String("src", ".", "the directory of the facade's Go source")
	flag.Parse()
	b, err := Generate(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(b)
		return
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Generate returns the TypeScript of the facade whose source is in src.
func Generate(src string) ([]byte, error) {
	var areas []tsgen.Area
	for _, a := range api.New(api.Deps{}).Areas() {
		areas = append(areas, tsgen.Area{Name: a.Name, Value: a.Value})
	}
	return tsgen.Generate(tsgen.Options{Areas: areas, Events: api.EventPayloads(), SourceDirs: []string{src}})
}
