import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { svelteTesting } from '@testing-library/svelte/vite';

// AIRLOCK_DEV_BACKEND=http://127.0.0.1:PORT lets `npm run dev` talk to a
// running `airlock serve` (open /?token=... on the backend once so the
// cookie is set for 127.0.0.1, then use the dev server on the same host).
const backend = process.env.AIRLOCK_DEV_BACKEND;

export default defineConfig({
  plugins: [svelte(), svelteTesting()],
  // The desktop build loads index.html from the embedded file system, so
  // asset URLs must be relative.
  base: './',
  build: {
    outDir: 'dist',
    // dist/.gitkeep is restored by scripts/keep-dist.mjs after the build.
    emptyOutDir: true,
    target: 'es2022',
  },
  server: backend
    ? { proxy: { '/api': { target: backend, changeOrigin: false } } }
    : undefined,
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts'],
    setupFiles: ['src/test-setup.ts'],
  },
});
