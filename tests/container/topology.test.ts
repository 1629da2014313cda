import { randomBytes } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  baseImage,
  buildServiceImage,
  containerIp,
  docker,
  documentedContainerSettings,
  logs,
  networkGateway,
  publishedPort,
  removeContainers,
  SERVICE_TAG,
  testImage,
  waitUntilReady,
} from '../helpers/container.js';
import { HoldServer } from '../helpers/hold-server.js';
import { until } from '../helpers/until.js';

const id = randomBytes(3).toString('hex');
const network = `daguerre-topology-${id}`;
const names = {
  mariadb: `dg-${id}-mariadb`,
  redis: `dg-${id}-redis`,
  s3: `dg-${id}-s3`,
  api: `dg-${id}-api`,
  workers: [`dg-${id}-worker-1`, `dg-${id}-worker-2`],
};
const page = (tag: string) => `<body style="margin:0;background:#${randomBytes(3).toString('hex')}"><h1>${tag}</h1></body>`;

/**
 * The multi-host layout of docs/deploy.md as containers on one network: the API (`daguerre serve`,
 * rendering no async jobs), two workers, MariaDB, Redis and an S3 store, each from a local image
 * (Debian's mariadb-server and redis-server, s3rver from npm) where no registry is reachable. With
 * `docker run`, since Compose v2 is not installed here; the topology is the Compose file's.
 */
describe('the API, two workers, MariaDB, Redis and an S3 store as containers', () => {
  const holds = new HoldServer(page);
  let api = '';
  let apiKey = '';
  let s3: S3Client;

  const daguerreEnv = (gateway: string, s3Address: string) => {
    const env: Record<string, string> = {
      DATABASE_URL: `mysql://daguerre:${id}pw@${names.mariadb}:3306/daguerre`,
      REDIS_URL: `redis://${names.redis}:6379`,
      STORAGE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SIGNING_SECRETS_KEY: randomBytes(32).toString('base64'),
      // By address: s3rver takes a host name that is not its own for a bucket's (CNAME-style addressing).
      RESULTS_S3_ENDPOINT: `http://${s3Address}:9000`,
      RESULTS_S3_BUCKET: 'daguerre',
      RESULTS_S3_ACCESS_KEY_ID: 'S3RVER',
      RESULTS_S3_SECRET_ACCESS_KEY: 'S3RVER',
      // A killed worker's job goes to the other one within seconds rather than 30.
      JOB_LOCK_MS: '5000',
      // The test's held pages, on the host as the network's gateway, are the one private destination allowed.
      EGRESS_ALLOW_LIST: `${gateway}:${new URL(holds.url).port}`,
    };
    return Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
  };

  beforeAll(async () => {
    const base = await baseImage();
    const [mariadbImage, redisImage, s3Image] = [
      await testImage('mariadb', base),
      await testImage('redis', base),
      await testImage('s3rver', base),
    ];
    // Built by image.test.ts when it ran first; otherwise now (layers cached).
    await buildServiceImage(SERVICE_TAG, base);
    await docker(['network', 'create', network]);
    const gateway = await networkGateway(network);
    await holds.start(gateway);

    const onNetwork = (name: string) => ['run', '-d', '--name', name, '--network', network];
    await docker([
      ...onNetwork(names.mariadb),
      '-e',
      'MARIADB_DATABASE=daguerre',
      '-e',
      'MARIADB_USER=daguerre',
      '-e',
      `MARIADB_PASSWORD=${id}pw`,
      mariadbImage,
    ]);
    await docker([...onNetwork(names.redis), redisImage]);
    await docker([...onNetwork(names.s3), '-p', '127.0.0.1::9000', s3Image]);
    await until(
      () =>
        docker(['exec', names.mariadb, 'test', '-f', '/run/mysqld/ready']).then(
          () => true,
          () => undefined,
        ),
      120_000,
      'MariaDB to be ready',
      500,
    );

    const env = daguerreEnv(gateway, await containerIp(names.s3, network));
    // docs/deploy.md's settings for every Daguerre container; the data folder of each a tmpfs of its own.
    const hardened = [...(await documentedContainerSettings()), '--tmpfs', '/app/data:size=64m,uid=10001,gid=10001,mode=0700'];
    await docker([...onNetwork(names.api), ...hardened, '-p', '127.0.0.1::3000', ...env, '-e', 'CAPTURE_WORKERS=0', SERVICE_TAG]);
    for (const worker of names.workers)
      await docker([
        ...onNetwork(worker),
        ...hardened,
        ...env,
        '-e',
        'CAPTURE_WORKERS=1',
        '-e',
        'WORKER_PORT=3001',
        SERVICE_TAG,
        'daguerre',
        'worker',
      ]);
    api = `http://127.0.0.1:${await publishedPort(names.api, 3000)}`;
    await waitUntilReady(`${api}/ready`, names.api);
    for (const worker of names.workers) {
      await until(
        () =>
          docker([
            'exec',
            worker,
            'node',
            '-e',
            "fetch('http://127.0.0.1:3001/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))",
          ]).then(
            () => true,
            () => undefined,
          ),
        120_000,
        `${worker} to be ready`,
        500,
      );
    }
    const org = JSON.parse(
      await docker(['exec', names.api, 'daguerre', 'org', 'create', '--name', 'Topology', '--credits', '100', '--json']),
    ) as { id: string };
    apiKey = (
      JSON.parse(await docker(['exec', names.api, 'daguerre', 'key', 'create', '--org', org.id, '--name', 'topology', '--json'])) as {
        key: string;
      }
    ).key;
    s3 = new S3Client({
      endpoint: `http://127.0.0.1:${await publishedPort(names.s3, 9000)}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  }, 1_900_000);

  afterAll(async () => {
    for (const name of [names.api, ...names.workers])
      if (process.env.DAGUERRE_CONTAINER_LOGS === '1') console.log(`--- ${name}\n${await logs(name)}`);
    await removeContainers([names.api, ...names.workers, names.mariadb, names.redis, names.s3]);
    await docker(['network', 'rm', network]).catch(() => undefined);
    await holds.stop();
    s3?.destroy();
  });

  const headers = () => ({ 'X-API-Key': apiKey, 'content-type': 'application/json' });
  const used = async () =>
    ((await (await fetch(`${api}/usage`, { headers: headers() })).json()) as { credits: { usedThisPeriod: number } }).credits
      .usedThisPeriod;
  const submit = async (body: object) => {
    const response = await fetch(`${api}/captures`, { method: 'POST', headers: headers(), body: JSON.stringify(body) });
    expect(response.status).toBe(202);
    return ((await response.json()) as { data: { jobId: string } }).data.jobId;
  };
  const finished = (jobId: string) =>
    until(
      async () => {
        const job = (await (await fetch(`${api}/captures/${jobId}`, { headers: headers() })).json()) as {
          data: { status: string; error?: unknown };
        };
        return job.data.status === 'succeeded' || job.data.status === 'failed' ? job.data : undefined;
      },
      120_000,
      `job ${jobId} to end`,
      250,
    );

  it('renders an async capture on a worker, keeps its file in the S3 store and serves it back through the API', async () => {
    const jobId = await submit({ html: page('async'), viewportWidth: 420, viewportHeight: 200 });
    const done = await finished(jobId);
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    const file = Buffer.from(await (await fetch(`${api}/captures/${jobId}/file`, { headers: headers() })).arrayBuffer());
    expect(file.subarray(1, 4).toString()).toBe('PNG');
    expect(file.readUInt32BE(16)).toBe(420);

    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'daguerre' }));
    const key = listed.Contents?.map((object) => object.Key!).find((name) => name.includes(jobId));
    expect(key, JSON.stringify(listed.Contents?.map((object) => object.Key))).toBeDefined();
    const stored = Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'daguerre', Key: key! }))).Body!.transformToByteArray());
    expect(stored.equals(file)).toBe(true);
    // Rendered by a worker: the API renders no async job (CAPTURE_WORKERS=0).
    const rendered = await Promise.all(names.workers.map(async (worker) => (await logs(worker)).includes(jobId)));
    expect(rendered.filter(Boolean)).toHaveLength(1);
  }, 180_000);

  it('a worker killed mid-job: the other worker finishes it, and it is charged once', async () => {
    const before = await used();
    const jobId = await submit({ url: `${holds.url}/hold/kill-worker`, viewportWidth: 300, viewportHeight: 200 });
    // The worker rendering it is the one whose address asked for the held page.
    const from = await holds.asked('kill-worker', 120_000);
    const ips = await Promise.all(names.workers.map((worker) => containerIp(worker, network)));
    const victim = names.workers[ips.indexOf(from)];
    expect(victim, `${from} is none of ${ips.join(', ')}`).toBeDefined();
    await docker(['kill', victim!]);
    holds.release('kill-worker');
    const job = await finished(jobId);
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    const survivor = names.workers.find((worker) => worker !== victim)!;
    expect(await logs(survivor)).toContain(jobId);
    const file = Buffer.from(await (await fetch(`${api}/captures/${jobId}/file`, { headers: headers() })).arrayBuffer());
    expect(file.readUInt32BE(16)).toBe(300);
    expect((await used()) - before).toBe(1);
  }, 240_000);
});
