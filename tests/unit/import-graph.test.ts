import { readdirSync } from 'node:fs';
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
      const violations = output.summary.violations.map(
        (v) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' → ')})` : ''}`,
      );
      expect(violations).toEqual([]);
      // The graph really was read: the renderer and the capture service are in it.
      expect(output.modules.some((m) => m.source === 'server/src/capture/renderer.ts')).toBe(true);
      expect(output.summary.totalCruised).toBeGreaterThan(100);
    } finally {
      process.chdir(previous);
    }
  });

  it('places every folder of server/src in a layer or the wiring, so that a new folder cannot escape the rules', () => {
    type Rule = { name: string; from: { path?: string }; to: { path?: string | string[] } };
    const rules = (require('../../.dependency-cruiser.cjs') as { forbidden: Rule[] }).forbidden.filter(
      (rule) =>
        (rule.name.startsWith('no-upward-from-') && !rule.name.startsWith('no-upward-from-capture-')) || rule.name === 'no-wiring-imports',
    );
    expect(rules.length).toBeGreaterThan(5);
    const patterns = rules.flatMap((rule) => [rule.from.path, rule.to.path].flat()).filter((path): path is string => path !== undefined);
    const folders = readdirSync(`${ROOT}server/src`, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders).toContain('monitors');
    const unplaced = folders.filter((folder) => !patterns.some((pattern) => new RegExp(pattern).test(`server/src/${folder}/a-file.ts`)));
    expect(unplaced).toEqual([]);
  });

  it('loads the markdown readers and the MCP face at first use, not when a worker starts (docs/scaling.md)', async () => {
    const previous = process.cwd();
    process.chdir(ROOT);
    try {
      const result = await cruise(['server/src/runtime.ts'], {
        doNotFollow: { path: 'node_modules' },
        tsPreCompilationDeps: true,
        tsConfig: { fileName: 'tsconfig.json' },
      });
      const modules = new Map((result.output as ICruiseResult).modules.map((m) => [m.source, m]));
      // What runtime.ts loads when it is loaded: static imports only (no import(), no types).
      const loaded = new Set(['server/src/runtime.ts']);
      for (const source of loaded) {
        for (const dependency of modules.get(source)?.dependencies ?? []) {
          if (dependency.dynamic || dependency.dependencyTypes.includes('type-only')) continue;
          loaded.add(dependency.resolved);
        }
      }
      expect(loaded.has('server/src/capture/output/page-content.ts')).toBe(true);
      // The packages, as resolved into node_modules or, for an export subpath the cruiser does not follow, by name.
      const packages = ['linkedom', 'defuddle', 'turndown', '@mozilla/readability', '@modelcontextprotocol/sdk'];
      const packageOf = (source: string) =>
        packages.find((name) => source.startsWith(`node_modules/${name}/`) || source.startsWith(`${name}/`) || source === name);
      expect([...loaded].filter((source) => packageOf(source))).toEqual([]);
      // All of them still load, at first use.
      expect(new Set([...modules.keys()].map(packageOf).filter(Boolean))).toEqual(new Set(packages));
    } finally {
      process.chdir(previous);
    }
  }, 60_000);
});
