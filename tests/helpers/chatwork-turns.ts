import { FakeAnthropic } from '../fakes/fake-anthropic';
import type { ServiceOverrides } from '../../src/service';
import { FakeChatwork, mentionDelivery, postWebhook, toButton } from './chatwork';
import { startTestService, waitFor, type TestService } from './service';

/**
 * Registers the jest hooks that start the service once, install the fake ChatWork API before each test and move
 * to the next room (ChatWork paces posts per room: a room per test keeps one test's replies from waiting for
 * another's window), and forget the model's script after each test. `env` may be a function, read when the service
 * starts (after the `beforeAll` hooks registered before this call, e.g. one writing the directory file).
 */
export function chatworkTurns(
  env: Record<string, string> | (() => Record<string, string>),
  firstRoom: number,
  overrides: ServiceOverrides = {},
) {
  let svc: TestService | undefined;
  let room = firstRoom;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  beforeAll(async () => {
    svc = await startTestService(typeof env === 'function' ? env() : env, overrides);
  }, 30_000);
  afterAll(async () => {
    await svc?.close();
  });
  beforeEach(() => {
    cw.install();
    room++;
  });
  afterEach(() => {
    llm.stop();
  });
  const running = (): TestService =>
    svc ??
    (() => {
      throw new Error('the service has not started');
    })();
  return {
    /** The running service (set in `beforeAll`). */
    get svc() {
      return running();
    },
    llm,
    cw,
    /** This test's room. */
    get room() {
      return room;
    },
    /** Sends a mention as ChatWork does, waits for the answer and the turn record. */
    async ask(from: number, body: string) {
      const s = running();
      const before = cw.posts.length;
      const sent = new Date();
      const d = mentionDelivery({ from, room, body: `[To:9999]${body}` });
      expect((await postWebhook(s.url, d.raw, d.signature)).status).toBe(200);
      await waitFor(() => cw.posts.length > before, 8000, 'reply');
      const turn = await waitFor(
        () =>
          s.db.turnRecord.findFirst({
            where: { accountId: String(from), roomId: String(room), createdAt: { gte: sent } },
            orderBy: { createdAt: 'desc' },
          }),
        5000,
        'turn record',
      );
      return { turn, post: cw.posts.at(-1)!.body };
    },
    /** Sends a message with the TO button's line as ChatWork does and waits for the room's `n`th post (its text). */
    async say(from: number, body: string, n: number): Promise<string> {
      const d = mentionDelivery({ from, room, body: toButton(body) });
      expect((await postWebhook(running().url, d.raw, d.signature)).status).toBe(200);
      await waitFor(() => cw.posts.length >= n, 10_000, `post #${n}`);
      return cw.posts[n - 1]!.body;
    },
    /** The newest turn record of this test's room. */
    lastTurn() {
      return waitFor(() =>
        running().db.turnRecord.findFirst({ where: { roomId: String(room) }, orderBy: { createdAt: 'desc' } }),
      );
    },
  };
}
