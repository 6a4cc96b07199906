// The e2e specs need a real `airlock serve`. Nothing is skipped: without a
// binary the run fails here, saying how to get one.
import { accessSync, constants } from 'node:fs';
import { everythingEntry } from './harness';

export default function setup(): void {
  const bin = process.env.AIRLOCK_BIN;
  if (!bin) {
    throw new Error(
      'AIRLOCK_BIN is not set. The e2e specs drive a real backend: build it (from the repo root: ' +
        '`go build -tags production -o build/bin/airlock .`, or `go tool task build`) and run ' +
        '`AIRLOCK_BIN=$PWD/build/bin/airlock npm --prefix frontend run e2e`.',
    );
  }
  try {
    accessSync(bin, constants.X_OK);
  } catch {
    throw new Error(`AIRLOCK_BIN=${bin} is not an executable file.`);
  }
  everythingEntry(); // throws with a clear message when the downstream server is not installed
}
