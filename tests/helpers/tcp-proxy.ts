import net from 'node:net';

/** A loopback TCP proxy to PostgreSQL that a test can cut (database outage) and restore. */
export class TcpProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  private up = true;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.server = net.createServer((client) => {
      if (!this.up) return void client.destroy();
      const upstream = net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** Drops every connection and refuses new ones. */
  cut(): void {
    this.up = false;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.up = true;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((r) => this.server?.close(() => r()));
  }
}

/** A fresh test database reached through a {@link TcpProxy}: `url` goes through the proxy. */
export async function proxiedTestDatabase(): Promise<{ proxy: TcpProxy; url: string }> {
  const { createTestDatabase } = await import('./db');
  const t = await createTestDatabase();
  await t.close();
  const target = new URL(t.url);
  const proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  await proxy.start();
  const viaProxy = new URL(t.url);
  viaProxy.port = String(proxy.port);
  return { proxy, url: viaProxy.toString() };
}
