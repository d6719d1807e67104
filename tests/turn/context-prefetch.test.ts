import { DirectoryCache } from '../../src/authorization/directory-cache';
import { loadDirectory, type Directory } from '../../src/authorization/directory';
import type { RoomMember, TurnContext } from '../../src/context/types';
import type { Sql } from '../../src/db/sql';
import { says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/** A statement the turn sent: what kind, and when it was sent and answered (ms, this process's clock). */
interface Sent {
  kind: 'first' | 'context' | 'other';
  start: number;
  end: number;
}

/** The turn's first statement reserves the reply and stores the message; the context read selects the history. */
const kindOf = (text: string): Sent['kind'] =>
  text.includes('INSERT INTO outbound_messages') && text.includes('conversation_messages')
    ? 'first'
    : text.includes('AS p_org') && text.includes('AS history')
      ? 'context'
      : 'other';

/**
 * A turn's context read starts beside its first statement, for the member the cached directory maps the sender's
 * account to (issue 10: one database round trip less before the model). The directory is only a guess: the turn
 * uses that read only when the actor its first statement reads from the database — the trust boundary — is the
 * same member with a member audience. These tests give the cache wrong answers and check that the model still
 * sees exactly the context of the person the database names.
 */
describe('the context read beside the turn’s first statement', () => {
  let t: TestDatabase;
  let p: TestPipeline;
  let sent: Sent[] = [];
  /** Rewrites the directory the cache holds (a stale or wrong cache); identity when null. */
  let distort: ((d: Directory) => Directory) | null = null;
  /** Context statements to fail (the database refusing the early read). */
  let failContext = 0;
  /** When the room's member list was asked for (this process's clock). */
  let membersAsked: number[] = [];
  /** The room's members as the platform lists them: a guest the directory does not know. */
  const roomMembers = async (): Promise<RoomMember[]> => {
    membersAsked.push(performance.now());
    return [{ accountId: 'guest-sasaki', name: '佐々木由美' }];
  };
  const directories = new DirectoryCache(async (orgId) => {
    const d = await loadDirectory(t.db, orgId);
    return distort ? distort(d) : d;
  });
  const watch =
    (sql: Sql): Sql =>
    async <T>(text: string, params?: unknown[]) => {
      const s: Sent = { kind: kindOf(text), start: performance.now(), end: NaN };
      sent.push(s);
      try {
        if (s.kind === 'context' && failContext > 0) {
          failContext--;
          throw new Error('canceling statement due to statement timeout');
        }
        return await sql<T>(text, params);
      } finally {
        s.end = performance.now();
      }
    };
  /** The turn's first statement and its only context read (a turn that read its context twice fails here). */
  const oneRead = (): { first: Sent; read: Sent } => {
    const reads = sent.filter((s) => s.kind === 'context');
    expect(reads).toHaveLength(1);
    return { first: sent.find((s) => s.kind === 'first')!, read: reads[0]! };
  };
  /** The context the model was given for the last turn, as text (sections and their lines). */
  const lastContext = (): TurnContext => p.brain.asked.at(-1)!.ctx;
  const sectionText = (ctx: TurnContext) => ctx.sections.map((s) => [s.title, ...s.lines].join('\n')).join('\n');

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t, {}, { directories, wrapSql: watch, roomMembers });
    await t.db.task.createMany({
      data: [
        { orgId: 'acme', title: '田中の見積書', assigneeMemberId: 'tanaka-taro', createdByMemberId: 'tanaka-taro' },
        {
          orgId: 'acme',
          title: '社長だけの買収案件',
          assigneeMemberId: 'yamada-ichiro',
          createdByMemberId: 'yamada-ichiro',
        },
      ],
    });
    await t.db.room.create({
      data: { platform: 'console', externalId: 'console-lobby', orgId: 'acme', name: 'ロビー', authority: 'public' },
    });
  });
  afterAll(() => t.close());
  beforeEach(() => {
    sent = [];
    membersAsked = [];
    distort = null;
    failContext = 0;
    directories.invalidate(null);
  });

  async function turn(text: string, over: Parameters<typeof consoleMessage>[1] = {}): Promise<TurnContext> {
    p.brain.script(says('了解ウル。'));
    const item = await p.take(consoleMessage(text, over));
    sent = [];
    membersAsked = [];
    expect(await p.runner.handleUserRequest(item)).toEqual({ completed: true });
    expect(p.sender.sent.at(-1)!.text).toBe('了解ウル。');
    return lastContext();
  }

  it('a member’s context is read while the first statement runs, once, and it is their own', async () => {
    await turn('こんにちは（準備）'); // the directory is cached, as after any earlier turn
    const ctx = await turn('今日の予定は？');

    const { first, read } = oneRead();
    expect(read.start).toBeLessThan(first.end);
    expect(ctx.sender.memberId).toBe('tanaka-taro');
    expect(ctx.audience).toBe('member');
    expect(sectionText(ctx)).toContain('田中の見積書');
    expect(sectionText(ctx)).not.toContain('社長だけの買収案件');
    expect(ctx.history.map((h) => h.text)).toContain('こんにちは（準備）');
    expect(ctx.history.map((h) => h.text)).not.toContain('今日の予定は？');
  });

  it('a member in a room the directory does not list (as ChatWork marks it) has it read early too', async () => {
    await turn('こんにちは（準備）', { roomId: 'console-unlisted', roomAuthority: 'public' });
    const ctx = await turn('私のタスクは？', { roomId: 'console-unlisted', roomAuthority: 'public' });

    // A member keeps a member audience in an unlisted room (only a room the directory lists as public makes it public).
    expect(ctx.audience).toBe('member');
    expect(sectionText(ctx)).toContain('田中の見積書');
    const { first, read } = oneRead();
    expect(read.start).toBeLessThan(first.end);
  });

  it('the room’s member list is asked for beside the first statement, once, and reaches the context', async () => {
    await turn('こんにちは（準備）');
    const ctx = await turn('佐々木由美さんに渡す資料はどれ？');

    const first = sent.find((s) => s.kind === 'first')!;
    expect(membersAsked).toHaveLength(1);
    expect(membersAsked[0]!).toBeLessThan(first.end);
    expect(sectionText(ctx)).toContain('「佐々木由美」さん（このルームのメンバー、ディレクトリ未登録）');
  });

  it('a cache naming someone else is not trusted: the person the database names gets their own context', async () => {
    // The cached directory says the console account tanaka-taro is the CEO's (a stale cache after an import that
    // moved the account); the database, which the first statement reads, says it is 田中太郎's.
    distort = (d) => ({
      ...d,
      members: d.members.map((m) =>
        m.id === 'yamada-ichiro'
          ? { ...m, accounts: [...(m.accounts ?? []), { platform: 'console', accountId: 'tanaka-taro' }] }
          : m.id === 'tanaka-taro'
            ? { ...m, accounts: [] }
            : m,
      ),
    });
    const ctx = await turn('私のタスクは？');

    expect(ctx.sender.memberId).toBe('tanaka-taro');
    expect(sectionText(ctx)).toContain('田中の見積書');
    expect(sectionText(ctx)).not.toContain('社長だけの買収案件');
    // The early read (the CEO's) was made and dropped; the turn read its own after the first statement.
    const first = sent.find((s) => s.kind === 'first')!;
    const reads = sent.filter((s) => s.kind === 'context');
    expect(reads).toHaveLength(2);
    expect(reads[1]!.start).toBeGreaterThanOrEqual(first.end);
  });

  it('a room the database makes public: the early read is dropped, the model sees no organisation data', async () => {
    // The console adapter does not know rooms' authority; the database's room entry says this one is public.
    const ctx = await turn('私のタスクは？', { roomId: 'console-lobby' });

    expect(ctx.audience).toBe('public');
    expect(ctx.sections).toEqual([]);
    expect(JSON.stringify(ctx)).not.toContain('田中の見積書');
    expect(sent.filter((s) => s.kind === 'context')).toHaveLength(2);
  });

  it('an account the cache does not know starts no early read (the turn reads as before)', async () => {
    distort = (d) => ({ ...d, members: d.members.filter((m) => m.id !== 'tanaka-taro') });
    const ctx = await turn('私のタスクは？');

    expect(ctx.sender.memberId).toBe('tanaka-taro');
    expect(sectionText(ctx)).toContain('田中の見積書');
    const { first, read } = oneRead();
    expect(read.start).toBeGreaterThanOrEqual(first.end);
  });

  it('an early read the database refuses degrades like the usual one: each part is read on its own', async () => {
    await turn('こんにちは（準備）');
    failContext = 1;
    const ctx = await turn('私のタスクは？');

    expect(sectionText(ctx)).toContain('田中の見積書');
    expect(ctx.history.map((h) => h.text)).toContain('こんにちは（準備）');
    expect(ctx.degraded).toEqual([]);
  });
});
