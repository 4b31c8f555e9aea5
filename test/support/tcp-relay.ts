/**
 * A TCP relay on 127.0.0.1 in front of a test's PostgreSQL that the test can break the way a network
 * does to a node's connections, while the server itself keeps running (so the data is still there
 * when the link comes back):
 * - cut(): a failover; every connection through it is reset, and every new one until restore();
 * - silence(): a partition; the open connections carry nothing more either way (no FIN, no RST),
 *   new ones are relayed; dropAll() then closes them, as the server's TCP keepalive eventually would;
 * - stopListening(): a stopped server; every connection is reset and new ones are refused
 *   (ECONNREFUSED) until listenAgain() opens the same port again.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export class TcpRelay {
  /** Connections reset on arrival while cut: each is a client's attempt to reconnect. */
  refusedConnections = 0;
  private cutOff = false;
  private readonly open = new Set<Socket>();

  private constructor(private readonly server: Server, readonly port: number) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpRelay> {
    let relay: TcpRelay | undefined;
    const server = createServer((client) => relay?.accept(client, targetHost, targetPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    relay = new TcpRelay(server, (server.address() as AddressInfo).port);
    return relay;
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

  /** The open connections carry nothing more either way (no FIN, no RST); new ones are relayed. */
  silence(): void {
    for (const socket of this.open) {
      socket.unpipe();
      socket.pause();
    }
  }

  /** Closes every open connection (the server then ends those sessions); new ones are relayed. */
  dropAll(): void {
    for (const socket of this.open) socket.destroy();
    this.open.clear();
  }

  /** As a stopped server: resets every connection and closes the port (new ones get ECONNREFUSED). */
  async stopListening(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.cutOff = false;
  }

  /** Opens the same port again after stopListening(), relaying as before. */
  async listenAgain(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** Resets every connection and stops listening. */
  async close(): Promise<void> {
    this.cut();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
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
