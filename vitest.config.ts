import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [
            "packages/*/src/**/*.test.ts",
            "apps/*/src/**/*.test.ts",
            "skills/**/*.test.ts",
            "scripts/**/*.test.ts",
          ],
        },
      },
      {
        // The adversarial suite (security/README.md): hostile input against the built API
        // process and CLI, one file per family of attack.
        extends: true,
        test: {
          name: "security",
          include: ["security/**/*.test.ts"],
        },
      },
      {
        // Browser journeys against the real API and console (e2e/harness/global-setup.ts
        // builds and starts them once per run); one file at a time, one Chromium each.
        extends: true,
        test: {
          name: "e2e",
          include: ["e2e/**/*.test.ts"],
          globalSetup: ["e2e/harness/global-setup.ts"],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
