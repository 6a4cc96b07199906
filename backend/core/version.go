package core

// Version is Airlock's version, set at build time with
// -ldflags "-X github.com/airlock-dev/airlock/backend/core.Version=…". It
// lives here so that airlock-bridge, which imports little, reports the same.
var Version = "0.1.0-dev"
