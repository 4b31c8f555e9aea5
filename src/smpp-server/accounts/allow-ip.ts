/**
 * The addresses an SMPP account may bind from: CIDR blocks, IPv4 or IPv6, checked with
 * node:net's BlockList. A bare address is a block of that one address (/32 or /128). An empty
 * list allows every address.
 *
 * A dual-stack listener reports an IPv4 peer as an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.1`, RFC 4291 §2.5.5.2): it is unwrapped and matched against the IPv4 blocks,
 * so an operator writes the address the customer knows.
 */
import { BlockList, isIP } from 'node:net';

export type IpFamily = 'ipv4' | 'ipv6';

export interface IpBlock {
  family: IpFamily;
  /** The network address as given (BlockList ignores the host bits). */
  address: string;
  prefixLength: number;
}

export type ParsedIpBlock = { kind: 'block'; block: IpBlock } | { kind: 'invalid'; reason: string };

const MAX_PREFIX: Record<IpFamily, number> = { ipv4: 32, ipv6: 128 };
const PREFIX_SHAPE = /^(0|[1-9][0-9]{0,2})$/;
/** An IPv4-mapped IPv6 address in the dotted form sockets report (RFC 4291 §2.5.5.2). */
const MAPPED_IPV4 = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;

function familyOf(address: string): IpFamily | undefined {
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : undefined;
}

/** `10.0.0.0/8`, `2001:db8::/32`, or a bare address. */
export function parseIpBlock(text: string): ParsedIpBlock {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  // A zone (fe80::1%eth0) names an interface of this host, not an address a peer has.
  const family = address.includes('%') ? undefined : familyOf(address);
  if (family === undefined) return { kind: 'invalid', reason: `'${text}' is not an IPv4 or IPv6 address or CIDR block` };
  if (slash === -1) return { kind: 'block', block: { family, address: address.toLowerCase(), prefixLength: MAX_PREFIX[family] } };
  const prefix = text.slice(slash + 1);
  if (!PREFIX_SHAPE.test(prefix) || Number(prefix) > MAX_PREFIX[family]) {
    return { kind: 'invalid', reason: `'${text}': the prefix length must be a whole number from 0 to ${MAX_PREFIX[family]}` };
  }
  return { kind: 'block', block: { family, address: address.toLowerCase(), prefixLength: Number(prefix) } };
}

/** The stored and printed form: always with its prefix length. */
export function formatIpBlock(block: IpBlock): string {
  return `${block.address}/${block.prefixLength}`;
}

/** The address to match: an IPv4-mapped IPv6 address as its IPv4 address, anything else as it is. */
export function unwrapMappedIpv4(address: string): string {
  return MAPPED_IPV4.exec(address)?.[1] ?? address;
}

/** An account's allowed addresses, built once per bind from its stored blocks. */
export class AllowList {
  private constructor(private readonly blocks: BlockList | undefined) {}

  /**
   * From stored blocks; a block that does not parse (a hand-edited row) makes the list allow
   * nothing rather than everything: an address rule that cannot be read is not a rule to drop.
   */
  static of(blocks: readonly string[]): AllowList {
    if (blocks.length === 0) return new AllowList(undefined);
    const list = new BlockList();
    for (const text of blocks) {
      const parsed = parseIpBlock(text);
      if (parsed.kind === 'invalid') return new AllowList(new BlockList());
      list.addSubnet(parsed.block.address, parsed.block.prefixLength, parsed.block.family);
    }
    return new AllowList(list);
  }

  /** May a peer at `remoteAddress` (as the socket reports it) bind? */
  allows(remoteAddress: string): boolean {
    if (this.blocks === undefined) return true;
    const address = unwrapMappedIpv4(remoteAddress);
    const family = familyOf(address);
    return family !== undefined && this.blocks.check(address, family);
  }
}
