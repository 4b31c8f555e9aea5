/**
 * A TCP proxy on 127.0.0.1 in front of a test's PostgreSQL that the test can cut, as a failover
 * does to a node's connections: cut() resets every connection through it and every new one until
 * restore(). The server itself keeps running, so the data is still there when the link comes back.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export class CuttableProxy {
  /** Connections reset on arrival while cut: each is a client's attempt to reconnect. */
  refusedConnections = 0;
  private cutOff = false;
  private readonly open = new Set<Socket>();

  private constructor(private readonly server: Server, readonly port: number) {}

  static async start(targetHost: string, targetPort: number): Promise<CuttableProxy> {
    let proxy: CuttableProxy | undefined;
    const server = createServer((client) => proxy?.accept(client, targetHost, targetPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy = new CuttableProxy(server, (server.address() as AddressInfo).port);
    return proxy;
  }

  /** Resets every open connection, and each new one until restore(). */
  cut(): void {
    this.cutOff = true;
    for (const socket of this.open) socket.resetAndDestroy();
    this.open.clear();
  }

  restore(): void {
    this.cutOff = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, host: string, port: number): void {
    if (this.cutOff) {
      this.refusedConnections += 1;
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(port, host);
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      this.open.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.open.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  }
}
