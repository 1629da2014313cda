import ipaddr from 'ipaddr.js';

/**
 * Which network addresses a capture may reach. Only public unicast is allowed: loopback, private,
 * link-local (cloud metadata 169.254.169.254), CGNAT, multicast, reserved and unspecified ranges are
 * refused in every notation, including IPv6 forms that embed an IPv4 address (IPv4-mapped,
 * IPv4-compatible, 6to4, NAT64, Teredo), whose embedded address is judged instead.
 */
export function isPublicAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    const embedded = embeddedIPv4(v6);
    if (embedded) return isPublicIPv4(embedded);
    return v6.range() === 'unicast';
  }
  return isPublicIPv4(parsed as ipaddr.IPv4);
}

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = address.range();
  const parts = address.parts;
  const fromWords = (hi: number, lo: number) => ipaddr.IPv4.parse(`${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`);
  if (range === 'ipv4Mapped') return address.toIPv4Address();
  // NAT64 (64:ff9b::/96 and 64:ff9b:1::/48) and IPv4-translated addresses carry the IPv4 in the last 32 bits.
  if (range === 'rfc6052' || range === 'rfc6145') return fromWords(parts[6]!, parts[7]!);
  if (range === '6to4') return fromWords(parts[1]!, parts[2]!);
  if (range === 'teredo') return fromWords(~parts[6]! & 0xffff, ~parts[7]! & 0xffff);
  // IPv4-compatible ::a.b.c.d (deprecated, still parsed by some stacks).
  if (parts.slice(0, 6).every((p) => p === 0) && (parts[6] !== 0 || parts[7]! > 1)) return fromWords(parts[6]!, parts[7]!);
  return undefined;
}

/**
 * Destinations an operator explicitly allows although they are private: `host:port` entries (the
 * test suite's fixture server, an intranet service). Exact matches only.
 */
export class EgressAllowList {
  private readonly entries: Set<string>;

  constructor(entries: string[]) {
    this.entries = new Set(entries.map((e) => e.trim().toLowerCase()).filter(Boolean));
  }

  /** Adds an entry at run time (the test suite allows each fixture server as it starts). */
  add(entry: string): void {
    this.entries.add(entry.trim().toLowerCase());
  }

  allows(address: string, port: number): boolean {
    const host = address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
    return this.entries.has(`${host.toLowerCase()}:${port}`);
  }
}

export interface AddressPolicy {
  /** When true every address is allowed (ALLOW_PRIVATE_NETWORK=true). */
  allowPrivateNetwork: boolean;
  allowList: EgressAllowList;
}

/** The network policy for everything the service connects to on a caller's behalf (targets, storage endpoints). */
export function egressPolicy(config: {
  ALLOW_PRIVATE_NETWORK: boolean;
  EGRESS_ALLOW_LIST: ConstructorParameters<typeof EgressAllowList>[0];
}): AddressPolicy {
  return { allowPrivateNetwork: config.ALLOW_PRIVATE_NETWORK, allowList: new EgressAllowList(config.EGRESS_ALLOW_LIST) };
}

export function addressAllowed(policy: AddressPolicy, address: string, port: number): boolean {
  return policy.allowPrivateNetwork || isPublicAddress(address) || policy.allowList.allows(address, port);
}
