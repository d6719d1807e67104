// Load generator for `npm run bench`, in its own process so its HTTP client does not share the
// service's CPU: hosts the fake ChatWork API (receives the replies) and sends signed webhooks.
import { chatworkSignature } from '../src/adapters/chatwork';
import { startFakeChatwork } from './fake-chatwork-server';

const TOKEN = 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';
const send = (m: unknown) => process.send!(m);

let seq = 1;
function delivery(room: number, from: number, body: string): { raw: string; sig: string } {
  const now = Math.floor(Date.now() / 1000);
  const raw = JSON.stringify({
    webhook_setting_id: '1',
    webhook_event_type: 'mention_to_me',
    webhook_event_time: now,
    webhook_event: {
      from_account_id: from,
      to_account_id: 9999,
      room_id: room,
      message_id: `b${process.pid}-${seq++}`,
      body: `[To:9999]${body}`,
      send_time: now,
      update_time: 0,
    },
  });
  return { raw, sig: chatworkSignature(raw, TOKEN) };
}

export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

async function main(): Promise<void> {
  const cw = await startFakeChatwork();
  send({ type: 'chatwork', url: cw.url });
  const { port, turns, acks, load } = await new Promise<{ port: number; turns: number; acks: number; load: number }>(
    (r) => process.once('message', (m) => r(m as never)),
  );
  const url = `http://127.0.0.1:${port}/webhooks/chatwork`;
  const post = async (d: { raw: string; sig: string }) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-chatworkwebhooksignature': d.sig },
      body: d.raw,
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
  };
  const waitPosts = async (n: number, ms = 120000) => {
    const until = Date.now() + ms;
    while (cw.posts.length < n) {
      if (Date.now() > until) throw new Error(`only ${cw.posts.length}/${n} replies arrived`);
      await new Promise((r) => setImmediate(r));
    }
  };
  const task = '田中太郎さんに資料作成のタスクをお願い、期限は明日';

  for (let i = 0; i < 50; i++) await post(delivery(7000 + i, 1004, 'こんにちは'));
  await waitPosts(50);

  const results: Record<string, unknown> = {};
  for (const kind of ['conversational', 'one-tool'] as const) {
    const lat: number[] = [];
    for (let i = 0; i < turns; i++) {
      const before = cw.posts.length;
      const t0 = performance.now();
      await post(
        delivery(10000 + i + (kind === 'one-tool' ? 50000 : 0), 1004, kind === 'one-tool' ? task : 'こんにちは'),
      );
      await waitPosts(before + 1);
      lat.push(cw.posts[before]!.at - t0);
    }
    results[kind] = { p50: pct(lat, 50), p99: pct(lat, 99), n: turns };
  }

  // Acknowledgement latency with the workers idle (the web role alone) and while they answer.
  send({ type: 'pause-workers' });
  await new Promise((r) => process.once('message', r));
  const idleAcks: number[] = [];
  for (let i = 0; i < acks; i++) {
    const t0 = performance.now();
    await post(delivery(200000 + i, 1004, 'こんにちは'));
    idleAcks.push(performance.now() - t0);
  }
  send({ type: 'resume-workers' });
  await new Promise((r) => process.once('message', r));
  const busyBase = cw.posts.length;
  await waitPosts(busyBase + acks);
  const busyAcks: number[] = [];
  const base2 = cw.posts.length;
  for (let i = 0; i < acks; i++) {
    const t0 = performance.now();
    await post(delivery(300000 + i, 1004, 'こんにちは'));
    busyAcks.push(performance.now() - t0);
  }
  await waitPosts(base2 + acks);
  results.ackIdle = { p50: pct(idleAcks, 50), p99: pct(idleAcks, 99), n: acks };
  results.ackBusy = { p50: pct(busyAcks, 50), p99: pct(busyAcks, 99), n: acks };

  send({ type: 'load-start' });
  const loadBase = cw.posts.length;
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < load) {
        const i = next++;
        await post(delivery(400000 + i, 1004 + (i % 5 === 0 ? 0 : 0), i % 5 === 0 ? task : 'こんにちは'));
      }
    }),
  );
  const accepted = performance.now() - t0;
  await waitPosts(loadBase + load, 600000);
  const total = performance.now() - t0;
  results.load = { n: load, acceptedPerS: load / (accepted / 1000), answeredPerS: load / (total / 1000) };
  send({ type: 'load-end' });
  send({ type: 'results', results });
  await cw.close();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
