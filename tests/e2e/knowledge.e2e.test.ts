import path from 'node:path';
import { importKnowledge } from '../../src/context/knowledge/import';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'knowledge');

interface SentRequest {
  system: { text: string }[];
  messages: { role: string; content: unknown }[];
  tools: { name: string }[];
}

describe('company knowledge in a turn (end to end, ChatWork, R-X4)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();

  beforeAll(async () => {
    svc = await startTestService(chatworkEnv());
    const summary = await importKnowledge(svc.db, {
      orgId: 'acme',
      path: FIXTURES,
      config: { maxBytes: 1024 * 1024, defaultLevel: 2 },
    });
    expect(summary.added).toHaveLength(5);
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

  async function ask(from: number, body: string): Promise<string> {
    const before = cw.posts.length;
    const d = mentionDelivery({ from, room: 5001, body: `[To:9999]${body}` });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length > before, 8000, 'reply');
    return cw.posts.at(-1)!.body;
  }

  const sent = (i: number) => llm.requests[i] as unknown as SentRequest;
  const systemText = (r: SentRequest) => JSON.stringify(r.system);
  const userText = (r: SentRequest) => JSON.stringify(r.messages);

  it('the passage reaches the model quoted with its title, outside the system block; the reply cites it', async () => {
    llm.script(
      replyCall(
        '「経費精算の手順」によると、経費は使った月の翌月5営業日までに申請するウル！' +
          '期限を過ぎたら経理部長の承認も要るウル。早めにシステムから申請してほしいウル🐺',
      ),
    );
    const post = await ask(1008, '経費の申請期限はいつまで？');
    const req = sent(0);
    expect(userText(req)).toContain(
      '文書「経費精算の手順」 見出し「経費精算の手順 › 申請の期限」 本文「経費は、使った月の翌月5営業日まで',
    );
    expect(systemText(req)).not.toContain('翌月5営業日');
    expect(systemText(req)).not.toContain('文書「');
    expect(req.tools.map((t) => t.name)).toContain('search_knowledge');
    expect(post).toContain('「経費精算の手順」によると');
    expect(post).toContain('翌月5営業日');
  });

  it('a level-1 member gets nothing of the level-5 minutes, in the context or through search_knowledge', async () => {
    llm.script(
      toolCall('search_knowledge', { query: '大阪 統合 予算' }),
      replyCall('その件について読める社内文書は見つからなかったウル。詳しくは上長に聞いてみてほしいウル🐺'),
    );
    const post = await ask(1008, '大阪の統合と新規事業の予算はどうなった？');
    const all = JSON.stringify(llm.requests);
    expect(all).not.toMatch(/役員会|8000万円|東京営業課へ統合/);
    // (search_knowledge is deferred: the first call was the search that loaded it.)
    expect(userText(sent(2))).toContain('tool_result');
    // The tool ran for the reader and found nothing they may read.
    expect(userText(sent(2))).toMatch(/"tool_result","tool_use_id":"[^"]+","content":"\{\\"passages\\":\[\]\}"/);
    expect(post).not.toMatch(/役員会|8000万円/);
  });

  it('a level-5 member asking the same gets the minutes in the context', async () => {
    llm.script(replyCall('「第12回役員会議事録」に書かれているウル。詳しくは議事録を確認してほしいウル🐺'));
    await ask(1002, '大阪の統合と新規事業の予算はどうなった？');
    expect(userText(sent(0))).toContain('文書「第12回役員会議事録」');
    expect(userText(sent(0))).toContain('8000万円');
    expect(systemText(sent(0))).not.toContain('8000万円');
  });
});
