import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // Property tests start from a fixed seed unless exploring (test/support/properties.ts).
          setupFiles: ['test/support/fast-check-setup.ts'],
          globalSetup: ['test/support/runtime-setup.ts'],
          testTimeout: 60_000,
          // One worker runs every unit file, modules loaded once: a fresh worker per file spent
          // more time starting and importing than testing (224 s against 83 s for the project).
          // Unit tests share no state through modules; each makes its own temporary folders.
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration',
          // The web catalog's browser tests (test/e2e) run here too: they need the same control plane.
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          // One control plane for the whole run, started (and built on first use) here.
          globalSetup: ['test/support/runtime-setup.ts', 'test/integration/global-setup.ts'],
          // Each file's fresh worker loads the same node_modules again: compiled once, then from Node's cache.
          // (One worker for every file, as the unit project has, saved some 1.5 s a file, but a full
          // run that way failed tests of files that pass on their own; the cause was not found.)
          setupFiles: ['test/support/compile-cache.ts'],
          // Files run one after another: each may run its own Bosun manager, and two managers
          // reconciling the same cluster at once would fight over the same objects.
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 3_600_000,
        },
      },
    ],
  },
});
