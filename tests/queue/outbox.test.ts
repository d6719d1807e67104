import { randomUUID } from 'node:crypto';
import type { ChatSender, FoundMessage, OutboundReply, SendResult } from '../../src/core/chat';
import { AppError } from '../../src/core/app-error';
import { WorkQueue, type ClaimedItem } from '../../src/queue/work-queue';
import { Outbox } from '../../src/queue/outbox';
import { installStatementCounter } from '../../src/db/statement-counter';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/**
 * A platform sender as the outbox sees it: `landed` are the messages that reached the room (the platform's
 * truth), `attempts` every send call. `next` scripts how the next send behaves.
 */
class RoomSender implements ChatSender {
  readonly platform = 'console' as const;
  landed: { key?: string; text: string; id: string }[] = [];
  attempts = 0;
  lookups = 0;
  next: 'ok' | 'lands_then_times_out' | 'times_out' | 'refused' = 'ok';

  async send(reply: OutboundReply): Promise<SendResult> {
    this.attempts++;
    const mode = this.next;
    this.next = 'ok';
    if (mode === 'refused') throw new AppError('EXTERNAL_API_FAILED', 'HTTP 400');
    if (mode === 'times_out') throw new AppError('EXTERNAL_API_FAILED', 'timeout', { uncertain: true });
    const id = `m${this.landed.length + 1}`;
    this.landed.push({ key: reply.idempotencyKey, text: reply.text, id });
    if (mode === 'lands_then_times_out') throw new AppError('EXTERNAL_API_FAILED', 'timeout', { uncertain: true });
    return { platformMessageId: id };
  }

  async findPosted(reply: OutboundReply): Promise<FoundMessage | null> {
    this.lookups++;
    const m = this.landed.find((x) => x.key === reply.idempotencyKey);
    return m ? { platformMessageId: m.id, text: m.text } : null;
  }
}

let tdb: TestDatabase;
let queue: WorkQueue;
beforeAll(async () => {
  tdb = await createTestDatabase();
  queue = new WorkQueue(tdb.db, { instanceId: 'outbox-test', claimTtlMs: 60_000, defaultMaxAttempts: 3 });
});
afterAll(async () => {
  await tdb.close();
});

function setup() {
  const sender = new RoomSender();
  const outbox = new Outbox(tdb.db, { claimMarginMs: 5_000, reconcileDelayMs: 1, sleep: async () => undefined });
  outbox.register(sender);
  const reply = (text: string): OutboundReply => ({ platform: 'console', roomId: 'r1', text });
  return { sender, outbox, reply, key: `reply:${randomUUID()}` };
}

async function claimedItem(): Promise<ClaimedItem> {
  await queue.enqueue({ type: 'user_request', payload: {}, orderingKey: randomUUID(), dedupeKey: randomUUID() });
  return (await queue.claim(['user_request']))!;
}

const row = (key: string) => tdb.db.outboundMessage.findUniqueOrThrow({ where: { dedupeKey: key } });

describe('Outbox: a message is posted at most once per key', () => {
  it('a post that lands but times out is found, marked sent, and not posted again', async () => {
    const { sender, outbox, reply, key } = setup();
    sender.next = 'lands_then_times_out';
    const res = await outbox.send(key, reply('こんにちは'));
    expect(res).toMatchObject({ platformMessageId: 'm1', skipped: false });
    expect(sender.landed).toHaveLength(1);
    expect(await row(key)).toMatchObject({ status: 'sent', platformMessageId: 'm1' });
    expect(await outbox.send(key, reply('こんにちは'))).toMatchObject({ skipped: true });
    expect(sender.attempts).toBe(1);
  });

  it('a post that timed out without landing stays uncertain; the next attempt looks, then posts once', async () => {
    const { sender, outbox, reply, key } = setup();
    sender.next = 'times_out';
    await expect(outbox.send(key, reply('a'))).rejects.toMatchObject({ uncertain: true });
    expect(await row(key)).toMatchObject({ status: 'uncertain' });
    const lookupsBefore = sender.lookups;
    await outbox.send(key, reply('a'));
    expect(sender.lookups).toBeGreaterThan(lookupsBefore);
    expect(sender.landed).toHaveLength(1);
    expect(await row(key)).toMatchObject({ status: 'sent' });
  });

  it('a refused post is a plain failure: no lookup, and the retry posts', async () => {
    const { sender, outbox, reply, key } = setup();
    sender.next = 'refused';
    await expect(outbox.send(key, reply('b'))).rejects.toMatchObject({ uncertain: false });
    expect(await row(key)).toMatchObject({ status: 'failed' });
    await outbox.send(key, reply('b'));
    expect(sender.lookups).toBe(0);
    expect(sender.landed).toHaveLength(1);
  });

  it('a row taken by a worker that died after posting (before "sent") is reconciled, not posted twice', async () => {
    const { sender, outbox, reply, key } = setup();
    const dead = await claimedItem();
    // The dead worker's state: it took the row, its post landed, it never recorded it.
    await outbox.reserve(key, { platform: 'console', roomId: 'r1' });
    await tdb.db.outboundMessage.update({ where: { dedupeKey: key }, data: { claimedBy: dead.claimToken } });
    sender.landed.push({ key, text: 'c', id: 'm-dead' });
    const res = await outbox.send(key, reply('c'), await claimedItem());
    expect(res).toMatchObject({ skipped: true, platformMessageId: 'm-dead' });
    expect(sender.attempts).toBe(0);
    expect(await row(key)).toMatchObject({ status: 'sent', platformMessageId: 'm-dead' });
  });

  it("only the worker holding the work item's claim posts; one that lost it posts nothing", async () => {
    const { sender, outbox, reply, key } = setup();
    const item = await claimedItem();
    // The claim expired and another worker took the item over.
    await tdb.db.$executeRaw`UPDATE work_items SET "claimedBy" = 'other-worker' WHERE id = ${item.id}`;
    await expect(outbox.send(key, reply('d'), item)).rejects.toMatchObject({ name: 'ClaimLostError' });
    expect(sender.attempts).toBe(0);

    const late = await claimedItem();
    // Still ours, but about to expire: too late to start a post.
    await tdb.db.$executeRaw`
      UPDATE work_items SET "claimExpiresAt" = now() + interval '1 second' WHERE id = ${late.id}`;
    await expect(outbox.send(`${key}:2`, reply('d'), late)).rejects.toMatchObject({ name: 'ClaimLostError' });

    const lost = { ...(await claimedItem()), claimLost: true };
    await expect(outbox.send(`${key}:3`, reply('d'), lost)).rejects.toMatchObject({ name: 'ClaimLostError' });
    expect(sender.attempts).toBe(0);

    const held = await claimedItem();
    await outbox.send(`${key}:4`, reply('d'), held);
    expect(sender.attempts).toBe(1);
    expect((await row(`${key}:4`)).claimedBy).toBe(held.claimToken);
  });
});

/**
 * A turn's first statement takes its reply's row as it reserves it (issue 10), and the post relies on that take only
 * while the claim, as the take saw it, still has the margin left (a claim is taken over only after it has expired).
 */
describe('Outbox: the take made before the post', () => {
  const counter = installStatementCounter();
  /** The takes (and "sent" marks outside a turn's last statement): UPDATEs of outbox rows. */
  const updates = () => counter.byShape()['UPDATE outbound_messages'] ?? 0;

  /** What a turn's first statement does: take the row for the claim, and hand the claim's time left to the outbox. */
  async function takeFirst(outbox: Outbox, key: string, item: ClaimedItem) {
    const sentAt = outbox.clock();
    const rows = await tdb.db.$queryRaw<{ left_ms: number }[]>`
      UPDATE outbound_messages o SET "claimedBy" = ${item.claimToken}
        FROM work_items w
       WHERE o."dedupeKey" = ${key} AND w.id = ${item.id} AND w."claimedBy" = ${item.claimToken}
         AND w.state = 'running' AND w."claimExpiresAt" > now()
      RETURNING (extract(epoch FROM w."claimExpiresAt" - now()) * 1000)::float8 AS left_ms`;
    return outbox.takenAt(sentAt, rows[0]?.left_ms ?? null);
  }

  async function aheadSetup() {
    const s = setup();
    let clock = 1_000;
    const outbox = new Outbox(tdb.db, { claimMarginMs: 5_000, reconcileDelayMs: 1, monotonic: () => clock });
    outbox.register(s.sender);
    const item = await claimedItem();
    await outbox.reserve(s.key, { platform: 'console', roomId: 'r1' });
    return { ...s, outbox, item, advance: (ms: number) => (clock += ms) };
  }

  it('the post that follows a take does not take the row again', async () => {
    const { sender, outbox, reply, key, item } = await aheadSetup();
    const heldUntil = await takeFirst(outbox, key, item);
    // The claim is 60 s long and the clock has not moved: held until about 61 s on the outbox's clock.
    expect(heldUntil).toBeGreaterThan(1_000 + 55_000);
    expect((await row(key)).claimedBy).toBe(item.claimToken);
    counter.reset();

    await outbox.deliver(key, reply('e'), item, { heldUntil, markLater: true });
    expect(sender.landed).toHaveLength(1);
    expect(updates()).toBe(0);
  });

  it('a take whose claim may have run short by the post is made again', async () => {
    const { sender, outbox, reply, key, item, advance } = await aheadSetup();
    const heldUntil = await takeFirst(outbox, key, item);
    // The model took 56 s: of the 60 s the take saw, less than the 5 s margin may be left.
    advance(56_000);
    counter.reset();
    await outbox.deliver(key, reply('f'), item, { heldUntil, markLater: true });
    // Taken again (the database still has the claim: no real time passed here), then posted.
    expect(updates()).toBe(1);
    expect(sender.landed).toHaveLength(1);
  });

  it('a claim lost while the model thought, or taken over before the take, posts nothing', async () => {
    const { sender, outbox, reply, key, item } = await aheadSetup();
    const heldUntil = await takeFirst(outbox, key, item);
    // A heartbeat found the claim gone while the model thought.
    const lost = Object.assign(item, { claimLost: true });
    await expect(outbox.deliver(key, reply('g'), lost, { heldUntil })).rejects.toMatchObject({
      name: 'ClaimLostError',
    });

    const second = await aheadSetup();
    await tdb.db.$executeRaw`UPDATE work_items SET "claimedBy" = 'other-worker' WHERE id = ${second.item.id}`;
    const late = await takeFirst(second.outbox, second.key, second.item);
    expect(late).toBeUndefined();
    await expect(second.outbox.deliver(second.key, reply('g'), second.item, { heldUntil: late })).rejects.toMatchObject(
      {
        name: 'ClaimLostError',
      },
    );
    expect(sender.attempts + second.sender.attempts).toBe(0);
    expect((await row(second.key)).claimedBy).toBeNull();
  });
});
