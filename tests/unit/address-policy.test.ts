import { describe, expect, it } from 'vitest';
import { addressAllowed, EgressAllowList, isPublicAddress } from '../../server/src/security/address-policy.js';
import { checkedAddress, DestinationRefusedError } from '../../server/src/security/destination-check.js';

/** What a URL's host becomes after the WHATWG parser (the browser's view of it). */
const hostOf = (url: string) => new URL(url).hostname;

describe('address classification', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.100.100.200',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.0.1',
    '198.18.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    '64:ff9b::7f00:1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    '2002:a9fe:a9fe::',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::'])(
    'allows %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', '[::ffff:a9fe:a9fe]'],
    ['http://0/', '0.0.0.0'],
  ])('every notation of a private address is refused: %s', (url, normalized) => {
    expect(hostOf(url)).toBe(normalized);
    expect(isPublicAddress(hostOf(url))).toBe(false);
  });

  it('refuses garbage', () => {
    expect(isPublicAddress('not-an-ip')).toBe(false);
  });

  it('an explicit allow-list entry opens exactly one host:port', () => {
    const policy = { allowPrivateNetwork: false, allowList: new EgressAllowList(['127.0.0.1:4000']) };
    expect(addressAllowed(policy, '127.0.0.1', 4000)).toBe(true);
    expect(addressAllowed(policy, '127.0.0.1', 4001)).toBe(false);
    expect(addressAllowed(policy, '127.0.0.2', 4000)).toBe(false);
    expect(addressAllowed({ ...policy, allowPrivateNetwork: true }, '10.0.0.1', 80)).toBe(true);
  });
});

describe('destination check', () => {
  const policy = { allowPrivateNetwork: false, allowList: new EgressAllowList([]) };

  it('refuses a name when any of its addresses is private', async () => {
    const resolver = async () => ['93.184.216.34', '10.0.0.5'];
    await expect(checkedAddress(policy, resolver, 'mixed.example', 80)).rejects.toBeInstanceOf(DestinationRefusedError);
  });

  it('returns the checked address so the caller connects to it and never resolves again', async () => {
    let calls = 0;
    // A rebinding resolver: public on the first look, loopback afterwards.
    const rebinding = async () => (++calls === 1 ? ['93.184.216.34'] : ['127.0.0.1']);
    expect(await checkedAddress(policy, rebinding, 'rebind.example', 80)).toBe('93.184.216.34');
    await expect(checkedAddress(policy, rebinding, 'rebind.example', 80)).rejects.toThrow(/non-public/);
  });

  it('refuses names that do not resolve', async () => {
    const failing = async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    };
    await expect(checkedAddress(policy, failing, 'nx.example', 80)).rejects.toThrow(/does not resolve/);
  });
});
