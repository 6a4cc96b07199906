import { defineConfig } from 'vitest/config';

// End-to-end specs drive a real `airlock serve` with Chromium; they run one
// file at a time because each spec starts its own backend and browser.
export default defineConfig({
  test: {
    environment: 'node',
    include: ['e2e/**/*.spec.ts'],
    globalSetup: ['e2e/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 90_000,
  },
});
