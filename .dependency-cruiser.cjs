/**
 * The house's import rules, checked in the suite (tests/unit/import-graph.test.ts) by
 * dependency-cruiser: no circles, and no folder of server/src importing one above it. The layers,
 * lowest first: security, store, capture, services, jobs, monitors, ops, mcp, http, dashboard, then the wiring
 * (runtime, cli). A type both sides need moves down to the lowest folder that uses it.
 */
const LAYERS = ['security', 'store', 'capture', 'services', 'jobs', 'monitors', 'ops', 'mcp', 'http', 'dashboard'];
const WIRING = '^server/src/(runtime|api-wiring|cli)';

/**
 * capture/ in the order of a capture's stages, lowest first: Chromium's processes, the contexts and
 * slots that hold pages, the steps on one page, what a capture outputs, what is read from the page
 * and the output. renderer.ts at the folder's root runs them; capture-error.ts beside it is the
 * layer's own error vocabulary, which every stage may use.
 */
const CAPTURE_STAGES = ['browser', 'pool', 'page', 'output', 'insight'];

const upwardInCapture = CAPTURE_STAGES.map((stage, index) => {
  const above = CAPTURE_STAGES.slice(index + 1);
  return {
    name: `no-upward-from-capture-${stage}`,
    comment: `capture/${stage} runs before ${[...above, 'renderer'].join(', ')}: it must not import them`,
    severity: 'error',
    from: { path: `^server/src/capture/${stage}/` },
    to: { path: above.length ? `^server/src/capture/((${above.join('|')})/|renderer\\.ts$)` : '^server/src/capture/renderer\\.ts$' },
  };
});

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
    ...upwardInCapture,
    {
      name: 'capture-knows-no-http',
      comment: "capture/ ends with its own error kinds (capture-error.ts); the services map them to the contract's codes",
      severity: 'error',
      from: { path: '^server/src/capture/' },
      to: { path: ['^server/src/errors\\.ts$', 'node_modules/(express|@ts-rest)/'] },
    },
    {
      name: 'http-never-imports-store',
      comment:
        'http/ maps the contract to services; what it needs of the database comes through a service or a narrow interface (docs/architecture.md)',
      severity: 'error',
      from: { path: '^server/src/http/' },
      to: { path: '^server/src/store/' },
    },
    {
      name: 'no-wiring-imports',
      comment: 'only the entry points import the wiring',
      severity: 'error',
      from: { pathNot: WIRING },
      to: { path: WIRING },
    },
    { name: 'contract-stands-alone', severity: 'error', from: { path: '^contract/' }, to: { path: '^(server|client)/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(node_modules|dist)/' },
  },
};
