/**
 * Which hosts a self-hosted Refdesk may fetch on behalf of a user. By default every URL a user
 * gives (websites, llms.txt, OpenAPI, Confluence, git) must resolve only to public addresses:
 * loopback, private, link-local, carrier-grade NAT, multicast and cloud-metadata addresses are
 * refused, after DNS resolution. An operator names internal hosts that are allowed anyway
 * (`network.allowHosts` in config: host names, IPs or CIDR ranges, e.g. `wiki.corp.local`,
 * `10.1.2.3`, `10.0.0.0/8`).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { RefdeskError } from '../errors.ts';

export interface NetworkPolicy {
  /** Host names, IP addresses or CIDR ranges that may be fetched even when private. */
  allowHosts: string[];
  /**
   * Turns the private-address checks off (a trusted single-user machine). Cloud-metadata
   * addresses stay refused unless allowHosts names them.
   */
  allowPrivateNetworks: boolean;
  /** Largest response body read from a user-given URL, in bytes. */
  maxResponseBytes: number;
  /** Time limit of one request, in milliseconds. */
  timeoutMs: number;
}

export const DEFAULT_NETWORK_POLICY: NetworkPolicy = Object.freeze({
  allowHosts: [],
  allowPrivateNetworks: false,
  maxResponseBytes: 50 * 1024 * 1024,
  timeoutMs: 30_000,
}) as NetworkPolicy;

const RANGES: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address'],
  ['100.64.0.0', 10, 'ipv4', 'a carrier-grade NAT address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address (cloud metadata lives here)'],
  ['172.16.0.0', 12, 'ipv4', 'a private address'],
  ['192.0.0.0', 24, 'ipv4', 'a reserved address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address'],
  ['198.18.0.0', 15, 'ipv4', 'a benchmarking address'],
  ['224.0.0.0', 4, 'ipv4', 'a multicast address'],
  ['240.0.0.0', 4, 'ipv4', 'a reserved address'],
  ['::', 128, 'ipv6', 'an unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['::', 96, 'ipv6', 'an IPv4-compatible address'],
  ['fc00::', 7, 'ipv6', 'a private address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
  ['64:ff9b::', 96, 'ipv6', 'a NAT64 address'],
];
/** One BlockList per range, built once (a check runs for every request and redirect hop). */
const RANGE_LISTS = RANGES.map(([net, prefix, type, reason]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, type);
  return { type, reason, list };
});
const METADATA = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254']);
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'instance-data']);

/**
 * An address in the form the range checks use: brackets and zone dropped, lower case, and an
 * IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, or `::ffff:7f00:1` as URLs write it) as IPv4.
 */
function normalizeAddress(address: string): string {
  const ip = address.toLowerCase().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(ip);
  if (hex) {
    const hi = parseInt(hex[1], 16);
    const lo = parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return ip;
}

/** True for the cloud-metadata addresses (AWS, GCP, Azure, Alibaba, ECS), IPv4-mapped ones too. */
function isMetadata(address: string): boolean {
  return METADATA.has(normalizeAddress(address));
}

/** Why an address may not be fetched, or null when it is public. */
export function blockedAddressReason(address: string): string | null {
  const ip = normalizeAddress(address);
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  if (METADATA.has(ip)) return 'a cloud metadata address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const range of RANGE_LISTS) if (range.type === type && range.list.check(ip, type)) return range.reason;
  return null;
}

function allowList(policy: NetworkPolicy): { names: Set<string>; ips: BlockList } {
  const names = new Set<string>();
  const ips = new BlockList();
  for (const entry of policy.allowHosts) {
    const e = entry.trim().toLowerCase();
    const [net, prefix] = e.split('/');
    const fam = isIP(net);
    if (fam && prefix !== undefined) ips.addSubnet(net, Number(prefix), fam === 4 ? 'ipv4' : 'ipv6');
    else if (fam) ips.addAddress(net, fam === 4 ? 'ipv4' : 'ipv6');
    else names.add(e);
  }
  return { names, ips };
}

function isAllowedIp(list: BlockList, ip: string): boolean {
  const fam = isIP(ip);
  return fam !== 0 && list.check(ip, fam === 4 ? 'ipv4' : 'ipv6');
}

export type Lookup = (host: string) => Promise<Array<{ address: string; family: number }>>;
const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Checks one URL: scheme http(s) (or the extra schemes given), then the host against the allow
 * list, then every address it resolves to. Resolves with the addresses it checked (so a caller can
 * connect to exactly those); throws a `forbidden` RefdeskError that names the host and the reason.
 */
export async function assertUrlAllowed(
  rawUrl: string | URL,
  policy: NetworkPolicy,
  options: { lookup?: Lookup; schemes?: string[] } = {},
): Promise<Array<{ address: string; family: number }>> {
  let url: URL;
  try {
    url = new URL(String(rawUrl));
  } catch {
    throw new RefdeskError('invalid_request', 'The URL is not a valid absolute URL.');
  }
  const schemes = options.schemes ?? ['http:', 'https:'];
  if (!schemes.includes(url.protocol)) {
    throw new RefdeskError('invalid_request', `Only ${schemes.map((s) => s.replace(':', '')).join(' and ')} URLs can be fetched (got ${url.protocol.replace(':', '')}).`);
  }
  if (url.username || url.password) {
    throw new RefdeskError('invalid_request', 'Credentials in a URL are refused: pass a token in its own field instead.');
  }
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const allow = allowList(policy);
  const lookup = options.lookup ?? systemLookup;
  if (isIP(host)) {
    if (isAllowedIp(allow.ips, host)) return [{ address: host, family: isIP(host) }];
    if (policy.allowPrivateNetworks && !isMetadata(host)) return [{ address: host, family: isIP(host) }];
    const reason = blockedAddressReason(host);
    if (reason) throw refused(host, reason);
    return [{ address: host, family: isIP(host) }];
  }
  const named = allow.names.has(host);
  if (!named && METADATA_NAMES.has(host)) throw refused(host, 'a cloud metadata host');
  if (!named && !policy.allowPrivateNetworks && (host === 'localhost' || host.endsWith('.localhost'))) {
    throw refused(host, 'a loopback address');
  }
  let addrs: Array<{ address: string; family: number }>;
  try {
    addrs = await lookup(host);
  } catch {
    throw new RefdeskError('invalid_source', `The host "${host}" could not be resolved.`);
  }
  if (addrs.length === 0) throw new RefdeskError('invalid_source', `The host "${host}" has no addresses.`);
  if (named) return addrs;
  if (policy.allowPrivateNetworks) {
    const meta = addrs.find((a) => isMetadata(a.address) && !isAllowedIp(allow.ips, a.address));
    if (meta) throw refused(host, `a cloud metadata address (${meta.address})`);
    return addrs;
  }
  for (const a of addrs) {
    if (isAllowedIp(allow.ips, a.address)) continue;
    const reason = blockedAddressReason(a.address);
    if (reason) throw refused(host, `${reason} (${a.address})`);
  }
  return addrs;
}

function refused(host: string, reason: string): RefdeskError {
  return new RefdeskError(
    'forbidden',
    `Refusing to fetch from "${host}": it is ${reason}. An operator can allow an internal host with network.allowHosts in the config.`,
  );
}

/**
 * The checks that need no DNS, for the moment a library is added: every http(s) URL among a
 * spec's top-level strings whose host is a literal IP, localhost or a metadata name is refused
 * at once (403). Names that must be resolved are left to the guarded fetch, which checks them
 * again on every request of the job.
 */
export async function refuseLiteralPrivateUrls(spec: Record<string, unknown>, policy: NetworkPolicy): Promise<void> {
  const noDns: Lookup = async () => {
    throw new Error('not resolved at add time');
  };
  for (const value of Object.values(spec)) {
    if (typeof value !== 'string' || !/^https?:\/\//i.test(value)) continue;
    try {
      await assertUrlAllowed(value, policy, { lookup: noDns });
    } catch (e) {
      if (e instanceof RefdeskError && e.code === 'forbidden') throw e;
    }
  }
}
