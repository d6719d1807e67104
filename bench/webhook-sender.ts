// The bench's webhook sender. Under load, the acknowledgement is timed in a worker thread of its own: the bench's
// main thread also serves the fake model and the fake ChatWork API, and its event loop, busy with their requests
// (a 26 KB model request parsed per turn), delayed the reading of acknowledgements by up to tens of milliseconds
// (its loop delay during a burst: p99 34 ms, max 66 ms, on a slow moment of the 2-core machine). ChatWork's sender
// and Anthropic's API are other machines; the service's acknowledgement is what is timed. The thread shares the
// machine's cores with everything else, as before.
import net from 'node:net';
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/** A signed webhook, ready to send. */
export interface Delivery {
  raw: string;
  sig: string;
}

/** How a set of deliveries is sent: at a fixed rate (open loop), or over a fixed number of connections. */
export type SendPlan = { kind: 'paced'; ratePerS: number } | { kind: 'closed'; concurrency: number };

/** Acknowledgement times (ms), in the deliveries' order; NaN where the delivery failed. */
export interface SendResult {
  acks: number[];
  /** When each delivery was sent (ms after the first), in the deliveries' order. */
  sentAt: number[];
  errors: string[];
}

interface Request {
  id: number;
  port: number;
  items: Delivery[];
  plan: SendPlan;
}

/**
 * Posts a delivery on a connection of its own, as a webhook sender makes them (`Connection: close`); resolves with
 * the acknowledgement time (ms) once the whole 200 answer has arrived. Written on a plain socket: node's HTTP client
 * took about twice the CPU per request (0.22–0.31 vs 0.13–0.14 ms, measured on this machine against a bare node
 * server), and this thread shares the machine's cores with the service it times.
 */
export function deliver(port: number, d: Delivery): Promise<number> {
  const body = Buffer.from(d.raw, 'utf8');
  const head =
    `POST /webhooks/chatwork HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\nX-ChatWorkWebhookSignature: ${d.sig}\r\nConnection: close\r\n\r\n`;
  const request = Buffer.concat([Buffer.from(head, 'latin1'), body]);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let received: Buffer = Buffer.alloc(0);
    let settled = false;
    const settle = (err: Error | null) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (err) reject(err);
      else resolve(performance.now() - t0);
    };
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const answer = completeAnswer(received);
      if (answer) settle(answer.status === 200 ? null : new Error(`webhook ${answer.status}`));
    });
    socket.on('error', (err) => settle(err));
    socket.on('close', () => settle(new Error('the connection closed before the whole answer arrived')));
  });
}

/** The status of a complete HTTP/1.1 answer in `bytes` (head and `Content-Length` body), or null while incomplete. */
export function completeAnswer(bytes: Buffer): { status: number } | null {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = bytes.toString('latin1', 0, end);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? NaN);
  const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
  return bytes.length >= end + 4 + length ? { status } : null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends every delivery as the plan says; each acknowledgement is timed from its request to its 200. */
async function send(port: number, items: Delivery[], plan: SendPlan): Promise<SendResult> {
  const acks: number[] = new Array<number>(items.length).fill(NaN);
  const sentAt: number[] = new Array<number>(items.length).fill(NaN);
  const errors: string[] = [];
  const t0 = performance.now();
  const one = (i: number) => (
    (sentAt[i] = performance.now() - t0),
    deliver(port, items[i]!).then(
      (ms) => void (acks[i] = ms),
      (err: Error) => void errors.push(err.message),
    )
  );
  if (plan.kind === 'closed') {
    let next = 0;
    await Promise.all(
      Array.from({ length: plan.concurrency }, async () => {
        while (next < items.length) await one(next++);
      }),
    );
  } else {
    const start = performance.now();
    const sends: Promise<void>[] = [];
    for (let i = 0; i < items.length; i++) {
      const wait = start + (i * 1000) / plan.ratePerS - performance.now();
      if (wait > 1) await sleep(wait);
      sends.push(one(i));
    }
    await Promise.all(sends);
  }
  return { acks, sentAt, errors };
}

/** The sender thread, seen from the bench's main thread. */
export class WebhookSender {
  private readonly worker: Worker;
  private seq = 0;
  private readonly pending = new Map<number, (r: SendResult) => void>();

  constructor(private readonly port: number) {
    const file = path.join(__dirname, 'webhook-sender.ts');
    const tsx = require.resolve('tsx/cjs/api');
    this.worker = new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(file)});`, {
      eval: true,
      workerData: { webhookSender: true },
    });
    this.worker.on('message', (m: { id: number } & SendResult) => {
      this.pending.get(m.id)?.(m);
      this.pending.delete(m.id);
    });
    this.worker.on('error', (err) => {
      console.error('webhook sender thread failed:', err);
      process.exit(1);
    });
  }

  send(items: Delivery[], plan: SendPlan): Promise<SendResult> {
    const id = ++this.seq;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.worker.postMessage({ id, port: this.port, items, plan } satisfies Request);
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

if (!isMainThread && (workerData as { webhookSender?: boolean } | null)?.webhookSender) {
  parentPort!.on('message', (r: Request) => {
    void send(r.port, r.items, r.plan).then((res) => parentPort!.postMessage({ id: r.id, ...res }));
  });
}
