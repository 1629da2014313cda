import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../../server/src/config.js';
import { Metrics } from '../../server/src/ops/metrics.js';
import { validateObject, type K8sObject } from '../helpers/k8s-models.js';

/**
 * The deployment files users apply (docs/deploy.md): `kubectl kustomize` renders the Kubernetes
 * manifests, every object validates against its schema (kubernetes-models, KEDA's included), and
 * the Compose file against the Compose specification's schema. The schemas let unknown fields
 * through, so the fields that matter (sandbox, probes, grace periods, secrets, the scaling metric)
 * are asserted one by one.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** Settings whose values must come from a Secret, never from a literal in a manifest. */
const SECRET_VARIABLES = [
  'DATABASE_URL',
  'REDIS_URL',
  'STORAGE_ENCRYPTION_KEY',
  'SIGNING_SECRETS_KEY',
  'METRICS_TOKEN',
  'RESULTS_S3_ACCESS_KEY_ID',
  'RESULTS_S3_SECRET_ACCESS_KEY',
];
/** Placeholder values of the right shape, to run the files' settings through the service's own config schema. */
const SECRET_SAMPLES: Record<string, string> = {
  DATABASE_URL: 'mysql://daguerre:pw@mariadb:3306/daguerre',
  REDIS_URL: 'redis://redis:6379',
  STORAGE_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
  SIGNING_SECRETS_KEY: Buffer.alloc(32, 2).toString('base64'),
  RESULTS_S3_ACCESS_KEY_ID: 'results-key-id',
  RESULTS_S3_SECRET_ACCESS_KEY: 'results-secret',
  METRICS_TOKEN: 'a-metrics-token-of-some-length',
};

type Obj = K8sObject & { spec?: any; data?: Record<string, string> }; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  let objects: Obj[];
  const find = (kind: string, name: string) => {
    const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
    if (!found) throw new Error(`no ${kind} ${name} in the rendered manifests`);
    return found;
  };
  const configMap = () => objects.find((o) => o.kind === 'ConfigMap' && o.metadata?.name?.startsWith('daguerre-config-'))!;

  beforeAll(async () => {
    const { stdout } = await run('/usr/bin/kubectl', ['kustomize', 'deploy/kubernetes'], { cwd: ROOT, timeout: 60_000 });
    objects = parseAllDocuments(stdout).map((doc) => doc.toJS() as Obj);
  });

  it('render with kubectl kustomize, and every object validates against its schema', () => {
    const kinds = objects.map((o) => `${o.apiVersion}/${o.kind}`).sort();
    expect(kinds).toEqual(
      expect.arrayContaining([
        'apps/v1/Deployment',
        'autoscaling/v2/HorizontalPodAutoscaler',
        'keda.sh/v1alpha1/ScaledObject',
        'keda.sh/v1alpha1/TriggerAuthentication',
        'networking.k8s.io/v1/NetworkPolicy',
        'policy/v1/PodDisruptionBudget',
        'v1/ConfigMap',
        'v1/Namespace',
        'v1/Service',
      ]),
    );
    for (const object of objects) validateObject(object);
    // The validation is real: a wrong type fails it.
    const broken = structuredClone(find('Deployment', 'daguerre-api'));
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'three thousand';
    expect(() => validateObject(broken)).toThrow(/containerPort/);
    // No Secret with placeholder values is shipped: the operator creates daguerre-secrets.
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    for (const object of objects.filter((o) => o.kind !== 'Namespace')) expect(object.metadata?.namespace).toBe('daguerre');
  });

  it("settings are the service's own: the ConfigMap plus each container's env pass its config schema", () => {
    for (const name of ['daguerre-api', 'daguerre-worker']) {
      const container = find('Deployment', name).spec.template.spec.containers[0];
      const env: Record<string, string> = { ...configMap().data, ...SECRET_SAMPLES };
      for (const entry of container.env as { name: string; value?: string }[]) if (entry.value !== undefined) env[entry.name] = entry.value;
      expect(() => loadConfig(env)).not.toThrow();
      // Every ConfigMap reference resolves to the generated (hash-suffixed) ConfigMap.
      expect(container.envFrom).toEqual([{ configMapRef: { name: configMap().metadata!.name } }]);
    }
  });

  it('the pods run Chromium sandboxed: non-root, no capabilities, a Localhost seccomp profile, /dev/shm in memory, read-only root', () => {
    const profile = JSON.parse(readFileSync(`${ROOT}deploy/kubernetes/seccomp/daguerre-chromium.json`, 'utf8')) as {
      defaultAction: string;
      syscalls: { names: string[]; action: string; args?: unknown[]; errnoRet?: number }[];
    };
    const rule = (name: string) => profile.syscalls.filter((r) => r.names.includes(name));
    expect(profile.defaultAction).toBe('SCMP_ACT_ERRNO');
    // What Chromium's user-namespace sandbox needs, allowed without argument filters...
    for (const call of ['clone', 'unshare', 'chroot']) expect(rule(call)).toEqual([expect.objectContaining({ action: 'SCMP_ACT_ALLOW' })]);
    expect(rule('clone')[0]!.args).toBeUndefined();
    expect(rule('clone3')).toEqual([expect.objectContaining({ action: 'SCMP_ACT_ERRNO', errnoRet: 38 })]);
    // ...and nothing that CAP_SYS_ADMIN would bring besides (RuntimeDefault refuses these too).
    for (const call of ['mount', 'setns', 'bpf', 'pivot_root', 'kexec_load', 'init_module']) expect(rule(call)).toEqual([]);
    // OCI form only: runtimes other than Docker ignore Docker's `includes`/`excludes` and would allow too much.
    expect(JSON.stringify(profile)).not.toMatch(/"(includes|excludes)"/);
    expect(find('ConfigMap', 'daguerre-seccomp-profile').data!['daguerre-chromium.json']).toBe(
      readFileSync(`${ROOT}deploy/kubernetes/seccomp/daguerre-chromium.json`, 'utf8'),
    );
    expect(find('Namespace', 'daguerre').metadata!.labels!['pod-security.kubernetes.io/enforce']).toBe('restricted');

    for (const name of ['daguerre-api', 'daguerre-worker']) {
      const pod = find('Deployment', name).spec.template.spec;
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/daguerre-chromium.json' },
      });
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(pod.automountServiceAccountToken).toBe(false);
      const container = pod.containers[0];
      expect(container.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      const volumeAt = (path: string) => {
        const mount = (container.volumeMounts as { name: string; mountPath: string }[]).find((m) => m.mountPath === path);
        return (pod.volumes as { name: string; emptyDir?: { medium?: string; sizeLimit?: string } }[]).find((v) => v.name === mount?.name);
      };
      expect(volumeAt('/dev/shm')?.emptyDir).toMatchObject({ medium: 'Memory' });
      expect(volumeAt('/dev/shm')?.emptyDir?.sizeLimit).toBeDefined();
      for (const writable of ['/tmp', '/home/daguerre', '/app/data']) expect(volumeAt(writable)?.emptyDir).toBeDefined();
      expect(container.resources.limits.memory).toBeDefined();
    }
    // The image runs as the same numeric user.
    expect(readFileSync(`${ROOT}deploy/Dockerfile`, 'utf8')).toMatch(/^USER 10001:10001$/m);
    expect(find('Deployment', 'daguerre-api').spec.template.spec.securityContext.runAsUser).toBe(10001);
  });

  it('probe /health and /ready, and give a pod CAPTURE_TIMEOUT_MS + preStop + a margin to drain', () => {
    const settings = loadConfig({ ...configMap().data, ...SECRET_SAMPLES });
    for (const name of ['daguerre-api', 'daguerre-worker']) {
      const pod = find('Deployment', name).spec.template.spec;
      const container = pod.containers[0];
      const portNames = (container.ports as { name: string }[]).map((p) => p.name);
      expect(container.livenessProbe.httpGet).toMatchObject({ path: '/health', port: 'http' });
      expect(container.startupProbe.httpGet).toMatchObject({ path: '/health', port: 'http' });
      expect(container.readinessProbe.httpGet).toMatchObject({ path: '/ready', port: 'http' });
      expect(portNames).toContain('http');
      const preStopSeconds = container.lifecycle?.preStop?.sleep?.seconds ?? 0;
      expect(settings.SHUTDOWN_TIMEOUT_MS).toBeGreaterThanOrEqual(settings.CAPTURE_TIMEOUT_MS);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(settings.SHUTDOWN_TIMEOUT_MS / 1000 + preStopSeconds + 10);
    }
    const api = find('Deployment', 'daguerre-api').spec.template.spec.containers[0];
    expect(api.lifecycle.preStop.sleep.seconds).toBeGreaterThanOrEqual(5);
    expect(api.ports).toEqual(
      expect.arrayContaining([
        { name: 'http', containerPort: 3000 },
        { name: 'metrics', containerPort: Number(configMap().data!.METRICS_PORT) },
      ]),
    );
    expect(api.env).toContainEqual({ name: 'CAPTURE_WORKERS', value: '0' });
    expect(find('Deployment', 'daguerre-worker').spec.template.spec.containers[0].args).toEqual([
      'node',
      'server/bin/daguerre.js',
      'worker',
    ]);
  });

  it('take every secret from the Secret daguerre-secrets, never from a literal', () => {
    for (const name of ['daguerre-api', 'daguerre-worker']) {
      const env = find('Deployment', name).spec.template.spec.containers[0].env as {
        name: string;
        value?: string;
        valueFrom?: { secretKeyRef?: { name: string; key: string } };
      }[];
      for (const variable of SECRET_VARIABLES) {
        const entry = env.find((e) => e.name === variable);
        expect(entry, `${name} ${variable}`).toEqual({
          name: variable,
          valueFrom: { secretKeyRef: { name: 'daguerre-secrets', key: variable } },
        });
      }
    }
    for (const key of Object.keys(configMap().data!)) expect(SECRET_VARIABLES).not.toContain(key);
  });

  it('scale the API on CPU (requests set) and the workers with KEDA on the backlog metric the service exposes', () => {
    const hpa = find('HorizontalPodAutoscaler', 'daguerre-api');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'daguerre-api' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } } },
    ]);
    expect(find('Deployment', 'daguerre-api').spec.template.spec.containers[0].resources.requests.cpu).toBeDefined();
    // The autoscalers own the replica counts.
    expect(find('Deployment', 'daguerre-api').spec.replicas).toBeUndefined();
    expect(find('Deployment', 'daguerre-worker').spec.replicas).toBeUndefined();

    const scaled = find('ScaledObject', 'daguerre-worker');
    expect(scaled.spec.scaleTargetRef.name).toBe('daguerre-worker');
    expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    const [trigger, ...others] = scaled.spec.triggers;
    expect(others).toEqual([]);
    // Not the `redis` list trigger: it cannot see BullMQ's prioritized jobs.
    expect(trigger.type).toBe('metrics-api');
    expect(trigger.metadata).toMatchObject({ format: 'prometheus', valueLocation: 'daguerre_capture_jobs_backlog', authMode: 'bearer' });
    // One pod's share is the jobs one worker renders at once.
    expect(trigger.metadata.targetValue).toBe(configMap().data!.CAPTURE_WORKERS);
    // The URL is the API Service's metrics port, and the service registers that metric.
    const service = find('Service', 'daguerre-api');
    const metricsPort = (service.spec.ports as { name: string; port: number }[]).find((p) => p.name === 'metrics')!.port;
    expect(trigger.metadata.url).toBe(`http://daguerre-api.daguerre.svc:${metricsPort}/metrics`);
    expect(new Metrics().registry.getSingleMetric('daguerre_capture_jobs_backlog')).toBeDefined();
    const auth = find('TriggerAuthentication', trigger.authenticationRef.name);
    expect(auth.spec.secretTargetRef).toEqual([{ parameter: 'token', name: 'daguerre-secrets', key: 'METRICS_TOKEN' }]);
  });

  it('PodDisruptionBudgets, the Service and the NetworkPolicies select the pods they are meant for', () => {
    const podLabels = (name: string) => find('Deployment', name).spec.template.metadata.labels as Record<string, string>;
    const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
      Object.entries(selector).every(([k, v]) => labels[k] === v);
    for (const name of ['daguerre-api', 'daguerre-worker']) {
      const pdb = find('PodDisruptionBudget', name);
      expect(pdb.spec.maxUnavailable).toBe(1);
      expect(selects(pdb.spec.selector.matchLabels, podLabels(name))).toBe(true);
      expect(selects(find('Deployment', name).spec.selector.matchLabels, podLabels(name))).toBe(true);
      for (const policy of objects.filter((o) => o.kind === 'NetworkPolicy'))
        expect(selects(policy.spec.podSelector.matchLabels, podLabels(name))).toBe(true);
    }
    expect(selects(find('Service', 'daguerre-api').spec.selector, podLabels('daguerre-worker'))).toBe(false);

    const egress = find('NetworkPolicy', 'daguerre-egress');
    expect(egress.spec.policyTypes).toEqual(['Egress']);
    const rules = egress.spec.egress as { to: { ipBlock?: { cidr: string; except?: string[] } }[]; ports: { port: number }[] }[];
    // The only rule that reaches beyond the cluster's DNS and the stores: public addresses on the web ports.
    const open = rules.filter((r) => r.to.some((peer) => peer.ipBlock));
    expect(open).toHaveLength(1);
    expect(open[0]!.ports.map((p) => p.port).sort()).toEqual([443, 80]);
    const v4 = open[0]!.to.find((peer) => peer.ipBlock?.cidr === '0.0.0.0/0')!.ipBlock!;
    expect(v4.except).toEqual(
      expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8', '100.64.0.0/10']),
    );
    for (const rule of rules.filter((r) => !open.includes(r))) for (const peer of rule.to) expect(peer.ipBlock).toBeUndefined();
    const ingress = find('NetworkPolicy', 'daguerre-ingress');
    const metricsRule = (ingress.spec.ingress as { from?: unknown[]; ports: { port: number }[] }[]).find((r) =>
      r.ports.some((p) => p.port === 9464),
    )!;
    expect(metricsRule.from?.length).toBeGreaterThan(0);
  });
});

describe('the example overlay (deploy/kubernetes-overlay)', () => {
  it('moves every object to its namespace, sets its image, and the KEDA metrics URL follows the namespace', async () => {
    const { stdout } = await run('/usr/bin/kubectl', ['kustomize', 'deploy/kubernetes-overlay'], { cwd: ROOT, timeout: 60_000 });
    const rendered = parseAllDocuments(stdout).map((doc) => doc.toJS() as Obj);
    for (const object of rendered.filter((o) => o.kind !== 'Namespace')) expect(object.metadata?.namespace).toBe('capture');
    const images = rendered
      .filter((o) => o.kind === 'Deployment')
      .flatMap((o) => o.spec.template.spec.containers.map((c: { image: string }) => c.image));
    expect(images).toEqual(['registry.example.com/daguerre:0.1.0', 'registry.example.com/daguerre:0.1.0']);
    const scaled = rendered.find((o) => o.kind === 'ScaledObject')!;
    expect(scaled.spec.triggers[0].metadata.url).toBe('http://daguerre-api.capture.svc:9464/metrics');
  });
});

describe('Compose file (deploy/compose.yaml)', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let compose: any;
  const text = readFileSync(`${ROOT}deploy/compose.yaml`, 'utf8');
  beforeAll(() => {
    compose = parse(text, { merge: true });
  });

  it("validates against the Compose specification's JSON schema (dclint's current copy)", () => {
    // Its `$schema` names draft-07 by an https address ajv does not know; ajv's default meta-schema is draft-07.
    const { $schema: _draft07, ...schema } = JSON.parse(
      readFileSync(`${ROOT}node_modules/dclint/schemas/compose.schema.json`, 'utf8'),
    ) as Record<string, unknown>;
    expect(_draft07).toMatch(/draft-07/);
    const validate = new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors, null, 2)).toBe(true);
    // The schema is strict about service keys: a typo fails.
    const broken = structuredClone(compose);
    broken.services.api.shm_sise = '1gb';
    expect(validate(broken)).toBe(false);
  });

  it('runs api, worker, redis, mariadb and an S3 store, with the image init, shm, a grace period past the capture timeout, and the sandbox profile', () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['api', 'worker', 'redis', 'mariadb', 's3']));
    const seconds = (duration: string) => Number(/^(\d+)s$/.exec(duration)?.[1] ?? NaN);
    for (const name of ['api', 'worker']) {
      const service = compose.services[name];
      // Interpolated the way Compose would, with sample secrets.
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries(service.environment as Record<string, string>)) {
        env[key] = String(value).replace(/\$\{(\w+)(:\?[^}]*)?\}/g, (_m, variable: string) => SECRET_SAMPLES[variable] ?? 'pw');
      }
      const settings = loadConfig(env);
      // The image's tini is PID 1; Compose's init on top of it made tini warn that reaping cannot work.
      expect(service.init).toBeUndefined();
      expect(service.shm_size).toMatch(/^[1-9]\d*(m|g)b$/);
      expect(seconds(service.stop_grace_period)).toBeGreaterThanOrEqual(settings.CAPTURE_TIMEOUT_MS / 1000 + 10);
      expect(settings.SHUTDOWN_TIMEOUT_MS).toBeGreaterThanOrEqual(settings.CAPTURE_TIMEOUT_MS);
      expect(service.read_only).toBe(true);
      expect(service.cap_drop).toEqual(['ALL']);
      const seccomp = (service.security_opt as string[]).find((o) => o.startsWith('seccomp='))!;
      expect(existsSync(`${ROOT}deploy/${seccomp.slice('seccomp='.length)}`)).toBe(true);
      expect(service.security_opt).toContain('no-new-privileges:true');
      // Secrets come from the operator's deploy/.env, required, never written here.
      for (const variable of ['STORAGE_ENCRYPTION_KEY', 'SIGNING_SECRETS_KEY', 'METRICS_TOKEN'])
        expect(service.environment[variable]).toMatch(new RegExp(`^\\$\\{${variable}:\\?`));
    }
    expect(compose.services.api.environment.CAPTURE_WORKERS).toBe('0');
    expect(compose.services.worker.command).toEqual(['daguerre', 'worker']);
    expect(compose.services.api.healthcheck.test.join(' ')).toContain('/ready');
  });
});
