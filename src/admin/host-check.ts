/**
 * Which Host headers the admin listener answers. A DNS-rebinding page (attacker.example resolving
 * first to the attacker, then to 127.0.0.1) is same-origin with itself in the browser, so Origin
 * and Sec-Fetch-Site checks pass; only the Host header still says the name the page was loaded
 * from. The listener answers only names it is reached by on purpose: its own address, the loopback
 * names when it is bound to loopback (or to every address), this machine's interface addresses
 * when it is bound to every address, and admin.allowedHosts. Everything else gets 421 (RFC 9110
 * §15.5.20 Misdirected Request: "not able to produce a response for this combination of scheme
 * and authority") before authentication, with a plain-text body and none of the page.
 *
 * The port is not part of the decision: a rebinding page reaches the listener only on its own
 * port, so the name is what it controls; a reverse proxy may forward its own port.
 */
import { networkInterfaces } from 'node:os';
import { isLoopbackHost } from './admin-config.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'] as const;
const WILDCARDS = new Set(['0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0']);

/** A name as compared: lower case, IPv6 brackets and a trailing dot dropped. */
export function normalizeHostName(name: string): string {
  return name.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/**
 * The name of a Host header value (`name`, `name:port`, `[v6]`, `[v6]:port`), normalised; null
 * when it is not of that shape (empty, a bad port, userinfo...).
 */
export function hostHeaderName(header: string): string | null {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:@/\s[\]]+)(?::(\d{1,5}))?$/.exec(header.trim());
  if (match === null) return null;
  if (match[2] !== undefined && Number(match[2]) > 65535) return null;
  return normalizeHostName(match[1]!);
}

/** The names the listener bound to `host` answers besides admin.allowedHosts. */
export function servedHostNames(host: string, allowedHosts: readonly string[] = [], interfaces: () => readonly string[] = interfaceAddresses): Set<string> {
  const names = new Set<string>([normalizeHostName(host), ...allowedHosts.map(normalizeHostName)]);
  const wildcard = WILDCARDS.has(normalizeHostName(host));
  if (wildcard || isLoopbackHost(host)) for (const name of LOOPBACK_NAMES) names.add(name);
  if (wildcard) for (const address of interfaces()) names.add(normalizeHostName(address));
  return names;
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

/**
 * Null when the request's Host is served; otherwise the plain-text reason for the 421. The
 * interface addresses are read per request for a wildcard bind (an address added after start counts).
 */
export function misdirectedReason(hostHeader: string | undefined, served: () => ReadonlySet<string>): string | null {
  if (hostHeader === undefined || hostHeader === '') return 'this admin listener needs a Host header naming it';
  const name = hostHeaderName(hostHeader);
  if (name !== null && served().has(name)) return null;
  return `this admin listener does not serve the host ${JSON.stringify(hostHeader)}; add its name to admin.allowedHosts if it is meant to reach this listener`;
}
