import { createRequire } from 'node:module';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const ROOT = new URL('../..', import.meta.url).pathname;

describe('the import graph', () => {
  it('has no circles and no folder importing one above it (.dependency-cruiser.cjs)', async () => {
    const rules = require('../../.dependency-cruiser.cjs') as { forbidden: unknown[]; options: Record<string, unknown> };
    const previous = process.cwd();
    process.chdir(ROOT);
    try {
      const result = await cruise(['server/src', 'contract/src', 'client/src'], {
        ...rules.options,
        validate: true,
        ruleSet: { forbidden: rules.forbidden } as never,
      });
      const output = result.output as ICruiseResult;
      const violations = output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' → ')})` : ''}`);
      expect(violations).toEqual([]);
      // The graph really was read: the renderer and the capture service are in it.
      expect(output.modules.some((m) => m.source === 'server/src/capture/renderer.ts')).toBe(true);
      expect(output.summary.totalCruised).toBeGreaterThan(100);
    } finally {
      process.chdir(previous);
    }
  });
});
