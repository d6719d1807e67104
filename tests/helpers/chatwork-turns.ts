import { FakeAnthropic } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from './chatwork';
import { startTestService, waitFor, type TestService } from './service';

/**
 * Registers the jest hooks that start the service once, install the fake ChatWork API before each test and move
 * to the next room (ChatWork paces posts per room: a room per test keeps one test's replies from waiting for
 * another's window), and forget the model's script after each test.
 */
export function chatworkTurns(env: Record<string, string>, firstRoom: number) {
  let svc: TestService | undefined;
  let room = firstRoom;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  beforeAll(async () => {
    svc = await startTestService(env);
  });
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
  };
}
