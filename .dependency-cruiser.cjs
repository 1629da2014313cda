/**
 * The house's import rules, checked in the suite (tests/unit/import-graph.test.ts) by
 * dependency-cruiser: no circles, and no folder of server/src importing one above it. The layers,
 * lowest first: security, store, capture, services, jobs, ops, mcp, http, dashboard, then the wiring
 * (runtime, cli). A type both sides need moves down to the lowest folder that uses it.
 */
const LAYERS = ['security', 'store', 'capture', 'services', 'jobs', 'ops', 'mcp', 'http', 'dashboard'];
const WIRING = '^server/src/(runtime|cli)';

const upward = LAYERS.flatMap((layer, index) => {
  const above = LAYERS.slice(index + 1);
  if (above.length === 0) return [];
  return [
    {
      name: `no-upward-from-${layer}`,
      comment: `server/src/${layer} is below ${above.join(', ')}: it must not import them`,
      severity: 'error',
      from: { path: `^server/src/${layer}/` },
      to: { path: `^server/src/(${above.join('|')})/` },
    },
  ];
});

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'import circles make layers meaningless', severity: 'error', from: {}, to: { circular: true } },
    ...upward,
    { name: 'no-wiring-imports', comment: 'only the entry points import the wiring', severity: 'error', from: { pathNot: WIRING }, to: { path: WIRING } },
    { name: 'contract-stands-alone', severity: 'error', from: { path: '^contract/' }, to: { path: '^(server|client)/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(node_modules|dist)/' },
  },
};
