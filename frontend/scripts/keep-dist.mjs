// Go embeds `all:frontend/dist`, so the directory must exist with a tracked
// file in a fresh clone. Vite empties dist on every build; put the
// placeholder back so `git status` stays clean after a build.
import { writeFileSync } from 'node:fs';
writeFileSync(new URL('../dist/.gitkeep', import.meta.url), '');
