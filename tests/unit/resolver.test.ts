import { lookup } from 'node:dns/promises';
import { describe, expect, it } from 'vitest';
import { hostsFileAddresses } from '../../server/src/security/hosts-file.js';
import { parseResolvConf, searchCandidates } from '../../server/src/security/resolv-conf.js';
import { sharedAnswers, systemResolver } from '../../server/src/security/resolver.js';

describe('the network policy resolver', () => {
  it('asks once for a name asked many times at once, and keeps "no such name" briefly', async () => {
    const asked: string[] = [];
    const resolve = sharedAnswers(async (host) => {
      asked.push(host);
      return (await lookup(host, { all: true })).map((record) => record.address);
    });
    const missing = `tracker-${process.pid}-${Date.now()}.invalid`;
    const answers = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => resolve(i % 2 ? missing : missing.toUpperCase())));
    expect(answers.every((answer) => answer.status === 'rejected' && (answer.reason as NodeJS.ErrnoException).code === 'ENOTFOUND')).toBe(
      true,
    );
    await expect(resolve(missing)).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(asked).toEqual([missing]);
  });

  it('asks again after a failure that is not final (no name server answered)', async () => {
    let calls = 0;
    const resolve = sharedAnswers(async () => {
      calls += 1;
      throw Object.assign(new Error('queryA ETIMEOUT'), { code: 'ETIMEOUT' });
    });
    await expect(resolve('slow.example')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    await expect(resolve('slow.example')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(calls).toBe(2);
  });

  it('reads /etc/hosts first, as getaddrinfo does: its names resolve as the system resolves them', async () => {
    expect(await hostsFileAddresses('LocalHost')).toContain('127.0.0.1');
    expect(await hostsFileAddresses('localhost.')).toContain('127.0.0.1');
    expect(await systemResolver('localhost')).toContain('127.0.0.1');
    expect(await hostsFileAddresses(`nowhere-${process.pid}.invalid`)).toBeUndefined();
    await expect(systemResolver(`nowhere-${process.pid}.invalid`)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('answers an address literal as it is, without asking anyone', async () => {
    expect(await systemResolver('203.0.113.7')).toEqual(['203.0.113.7']);
    expect(await systemResolver('::1')).toEqual(['::1']);
  });
});

describe("resolv.conf's search domains", () => {
  const kubernetes = parseResolvConf(
    'nameserver 10.96.0.10\nsearch shop.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5 # a comment\n',
  );

  it('reads the search list and ndots, the last search or domain line winning', () => {
    expect(kubernetes).toEqual({ search: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local'], ndots: 5 });
    expect(parseResolvConf('domain corp.example.\nsearch a.example b.example\n')).toEqual({ search: ['a.example', 'b.example'], ndots: 1 });
    expect(parseResolvConf('nameserver 1.1.1.1\n')).toEqual({ search: [], ndots: 1 });
  });

  it('asks a short name with each search domain, and a fully qualified or long one as it is only', () => {
    expect(searchCandidates('grafana', kubernetes)).toEqual([
      'grafana.shop.svc.cluster.local',
      'grafana.svc.cluster.local',
      'grafana.cluster.local',
    ]);
    expect(searchCandidates('grafana.', kubernetes)).toEqual([]);
    expect(searchCandidates('a.b.c.d.e.example', kubernetes)).toEqual([]);
    expect(searchCandidates('intranet', { search: ['corp.example'], ndots: 1 })).toEqual(['intranet.corp.example']);
    expect(searchCandidates('www.example.com', { search: ['corp.example'], ndots: 1 })).toEqual([]);
  });
});
