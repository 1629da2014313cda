import { defineConfig } from 'vitest/config';

/**
 * Tests that kill processes, race workers or hold captures to their deadlines: they run one at a
 * time, after the rest, because a second file beside them shifts their timing (seen in CI: a worker
 * finished its job before it could be killed).
 */
const ALONE = [
  'tests/integration/async-captures.test.ts',
  'tests/integration/faults.test.ts',
  'tests/integration/fault-recovery.test.ts',
  'tests/integration/exactly-once.test.ts',
  'tests/integration/exactly-once-database.test.ts',
  'tests/integration/fair-async.test.ts',
  'tests/integration/capture-crash.test.ts',
  'tests/integration/fair-share.test.ts',
  'tests/integration/plan-share.test.ts',
  // Its omitBackground case saw a transparent background carried over twice with another file beside it.
  'tests/integration/capture-page-control.test.ts',
  // Five services and a data host in network namespaces; kills a worker and an API instance.
  'tests/integration/multi-host.test.ts',
  // Memory bombs: ~0.5 GB each, ended by the watchdog; its margin assertion wants the cores to itself.
  'tests/integration/renderer-memory-limit.test.ts',
  // Kills a service while it encodes a video: ffmpeg must be caught mid-stream.
  'tests/integration/video-encoder-killed.test.ts',
];

/** In the checkout, @daguerre/client resolves to its sources (client/package.json "exports"), as for tsc and bin/daguerre.js. */
const CONDITIONS = ['daguerre-source', 'node', 'development|production'];

/**
 * The image and the multi-container run (tests/container) need a container engine and minutes of
 * their own: .ci/run runs them as a separate step (scripts/container/test.sh), never `npm test`.
 */
const CONTAINER_TESTS = process.env.DAGUERRE_CONTAINER_TESTS === '1';

export default defineConfig({
  resolve: { conditions: CONDITIONS },
  ssr: { resolve: { conditions: CONDITIONS } },
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    projects: [
      // One project per area, so that one area runs by itself (docs/development.md):
      // `npx vitest run --project unit`, `--project 'integration*'`. `unit` and `integration` share
      // group 0, hence one pool of two workers, as when they were a single project.
      {
        extends: true,
        test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], fileParallelism: true, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        // Two files at a time: most integration time is spent waiting (page loads, timers, child
        // processes), so two overlap well on 2 cores; more would thrash Chromium.
        test: {
          name: 'integration',
          include: ['tests/**/*.test.ts'],
          exclude: [...ALONE, 'tests/unit/**', 'tests/container/**'],
          fileParallelism: true,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'integration-alone', include: ALONE, fileParallelism: false, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
      ...(CONTAINER_TESTS
        ? [
            {
              extends: true as const,
              test: {
                name: 'container',
                include: ['tests/container/**/*.test.ts'],
                fileParallelism: false,
                maxWorkers: 1,
                sequence: { groupOrder: 2 },
              },
            },
          ]
        : []),
    ],
  },
});
