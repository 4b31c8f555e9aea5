/**
 * Routes a normalised msisdn to a transport by the longest matching prefix (ARCHITECTURE.md,
 * "Routes match the normalised msisdn by longest prefix"). A route with prefix "" matches every
 * number. Two routes with the same prefix: the first one listed wins.
 */
export interface Route {
  prefix: string;
  transport: string;
}

export class RouteTable {
  private readonly byLongestPrefix: readonly Route[];

  constructor(routes: readonly Route[]) {
    // Stable sort keeps the listed order among equal prefixes.
    this.byLongestPrefix = [...routes].sort((a, b) => b.prefix.length - a.prefix.length);
  }

  /** The transport name for this number, or undefined when no route matches. */
  transportFor(msisdn: string): string | undefined {
    for (const route of this.byLongestPrefix) {
      if (msisdn.startsWith(route.prefix)) return route.transport;
    }
    return undefined;
  }
}
