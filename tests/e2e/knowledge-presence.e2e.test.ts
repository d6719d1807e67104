import path from 'node:path';
import { installStatementCounter } from '../../src/db/statement-counter';
import { importKnowledge } from '../../src/context/knowledge/import';
import { FakeAnthropic, replyCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'knowledge');

/**
 * Issue 10: an organisation without documents costs its turns no knowledge search (whether it has any is cached
 * per organisation); an import, even from another process, is noticed at once (NOTIFY), not after a restart.
 */
describe('knowledge search only where there are documents', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  const counter = installStatementCounter();

  beforeAll(async () => {
    svc = await startTestService(chatworkEnv());
  });
  afterAll(async () => {
    await svc.close();
  });
  beforeEach(() => {
    cw.install();
  });
  afterEach(() => {
    llm.stop();
  });

  async function ask(body: string): Promise<void> {
    const before = cw.posts.length;
    const d = mentionDelivery({ from: 1008, room: 5001, body: `[To:9999]${body}` });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length > before, 8000, 'reply');
  }
  const lastUserTurn = () => JSON.stringify((llm.requests.at(-1) as { messages: unknown[] }).messages);
  const searches = () => counter.byShape()['SELECT jsonb_array_elements'] ?? 0;

  it('searches nothing before the first import, and finds the passage right after it', async () => {
    for (let i = 0; i < 2; i++) llm.script(replyCall('まだ社内文書はないウル。担当の人に聞いてみてほしいウル。'));
    await ask('経費の申請期限はいつまで？');
    counter.reset();
    await ask('経費の申請期限はいつまで？（もう一度）');
    expect(searches()).toBe(0);
    expect(lastUserTurn()).not.toContain('文書「');

    const summary = await importKnowledge(svc.db, {
      orgId: 'acme',
      path: FIXTURES,
      config: { maxBytes: 1024 * 1024, defaultLevel: 2 },
    });
    expect(summary.added.length).toBeGreaterThan(0);
    // The importer's NOTIFY reaches the service's listener within moments; a person asking again finds the passage.
    let found = false;
    for (let i = 0; i < 10 && !found; i++) {
      llm.script(replyCall('「経費精算の手順」によると翌月5営業日までウル！'));
      await ask(`経費の申請期限はいつまで？（${i + 2}回目）`);
      found = lastUserTurn().includes('文書「経費精算の手順」');
      if (!found) await new Promise((r) => setTimeout(r, 100));
    }
    expect(found).toBe(true);
  });
});
