import net from 'node:net';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../fakes/anthropic-server';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { captureLogger } from '../helpers/logs';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** What the room hears when the AI cannot be used (the soul persona). */
const NOT_AVAILABLE =
  'ごめんなさいウル、いまAIにつながらないので、お答えできないウル。管理者にはもう知らせてあるウル。' +
  '直ったら、もう一度話しかけてほしいウル🐺';

/**
 * Issue 41: a model the service cannot use — a key the API rejects, an API it cannot reach — is told truthfully:
 * the log says the cause in one sentence (once), the room hears that the AI is not available and the administrator
 * was told (never "that is confidential": the service's own text naming ANTHROPIC_API_KEY is not checked as if a
 * person had written a secret), an admin alert goes out once, and /admin's setup section says why.
 */
describe('the model connection tells the truth', () => {
  const cw = new FakeChatwork();
  let room = 7100;
  beforeEach(() => {
    cw.install();
    room++;
  });

  /** The service with ChatWork and the console on, the start-up check on, its log kept. */
  async function start(baseUrl: string): Promise<{ svc: TestService; lines: Record<string, unknown>[] }> {
    const { logger, lines } = captureLogger('info');
    const svc = await startTestService(
      { ...chatworkEnv(), ANTHROPIC_BASE_URL: baseUrl, ADMIN_TOKEN },
      { llmCheck: true, logger },
    );
    await svc.setup.aiChecked;
    return { svc, lines };
  }
  async function mention(svc: TestService, body: string): Promise<string> {
    const before = cw.posts.length;
    const d = mentionDelivery({ from: 1004, room, body: `[To:9999]${body}` });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length > before, 10000, 'a reply');
    return cw.posts.at(-1)!.body;
  }
  const setupOf = async (svc: TestService) =>
    (await (await fetch(`${svc.url}/admin/api/setup`, { headers: bearer })).json()) as {
      items: { key: string; state: string; text: string }[];
      today: { turns: number; aiFailed: number };
    };
  const failures = (lines: Record<string, unknown>[]) =>
    lines.filter((l) => String(l.msg).startsWith('AI connection failed'));

  describe('a key the API rejects (401)', () => {
    let fake: FakeAnthropicServer;
    let svc: TestService;
    let lines: Record<string, unknown>[];
    beforeAll(async () => {
      fake = await startFakeAnthropicServer(() => ({ status: 401, errorType: 'authentication_error' }));
      ({ svc, lines } = await start(fake.url));
    });
    afterAll(async () => {
      await svc.close();
      await fake.close();
    });

    it('the log says so in one sentence, once, at start', () => {
      expect(failures(lines).map((l) => l.msg)).toEqual([
        'AI connection failed: The Anthropic API rejected the key in ANTHROPIC_API_KEY (401 authentication_error): ' +
          'set a valid key in .env and restart.',
      ]);
      // The check was one token count, not a model call.
      expect(fake.requests).toHaveLength(1);
    });

    it('the room hears the AI is not available and the administrator was told — not "confidential"', async () => {
      for (const ask of ['今日の予定を教えて', 'もう一度お願い']) {
        const said = await mention(svc, ask);
        expect(said).toContain(NOT_AVAILABLE);
        expect(said).not.toMatch(/機密|ANTHROPIC_API_KEY/);
      }
      const turns = await waitFor(async () => {
        const all = await svc.db.turnRecord.findMany({
          where: { roomId: String(room), kind: 'user_request' },
          orderBy: { createdAt: 'asc' },
        });
        return all.length === 2 && all;
      });
      expect(turns.map((t) => [t.decision, t.reasonCode])).toEqual([
        ['ERROR', 'LLM_NOT_CONFIGURED'],
        ['ERROR', 'LLM_NOT_CONFIGURED'],
      ]);
      // Still one log line and one alert: the cause did not change.
      expect(failures(lines)).toHaveLength(1);
      expect(await svc.db.adminAlert.count({ where: { kind: 'llm_unavailable' } })).toBe(1);
    });

    it('the admin room gets the alert with the cause and the fix, unblocked', async () => {
      const notice = await waitFor(
        () => svc.db.turnRecord.findFirst({ where: { kind: 'notification', reasonCode: 'A_LLM_UNAVAILABLE' } }),
        10000,
        'the alert notice',
      );
      expect(notice.decision).toBe('NOTICE');
      expect(notice.finalReply).toContain('Anthropic API がAIのキーを受け付けません:');
      // When, as the admins' clock says it (BOT_TIMEZONE, like /admin), and what, in words: no ISO time in UTC
      // (「発生時刻: 2026-11-28T21:27:56.872Z」) and no code (「（llm_unavailable）」), as the alert said before.
      const alert = await svc.db.adminAlert.findFirstOrThrow({ where: { kind: 'llm_unavailable' } });
      const since = new Date(String((alert.facts as { since: string }).since));
      const local = new Intl.DateTimeFormat('ja-JP', {
        timeZone: 'Asia/Tokyo',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }).format(since);
      expect(notice.finalReply).toContain(`発生時刻: ${local}\n`);
      expect(notice.finalReply).not.toMatch(/llm_unavailable|\d{4}-\d{2}-\d{2}T/);
      // /admin's list of alerts says the same time.
      const listed = (await (await fetch(`${svc.url}/admin/api/alerts`, { headers: bearer })).json()) as {
        alerts: { lines: string[] }[];
      };
      expect(listed.alerts[0]!.lines).toContain(`発生時刻: ${local}`);
    });

    it('/admin says why, and that every conversation today failed for it', async () => {
      const s = await setupOf(svc);
      expect(s.items.find((i) => i.key === 'ai')).toEqual({
        key: 'ai',
        label: 'AI（Anthropic）',
        state: 'problem',
        text: 'Anthropic API がAIのキーを受け付けません: .env のキーを正しいものにして、再起動してください。',
      });
      expect(s.today.turns).toBeGreaterThanOrEqual(2);
      expect(s.today.aiFailed).toBe(s.today.turns);
      // The reason is a label people read, in the audit too.
      const audit = (await (await fetch(`${svc.url}/admin/api/labels`, { headers: bearer })).json()) as {
        reasons: Record<string, { label: string }>;
      };
      // The key is set (and rejected): not 「AI未設定」, what the audit said of it before.
      expect(audit.reasons.LLM_NOT_CONFIGURED!.label).toBe('AIの設定（キー・モデル）');
    });
  });

  describe('an API the service cannot reach (connection refused)', () => {
    let svc: TestService;
    let lines: Record<string, unknown>[];
    let port: number;
    beforeAll(async () => {
      // A port nothing listens on.
      port = await new Promise<number>((resolve) => {
        const s = net.createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as net.AddressInfo).port;
          s.close(() => resolve(p));
        });
      });
      ({ svc, lines } = await start(`http://127.0.0.1:${port}`));
    });
    afterAll(async () => {
      await svc.close();
    });

    it('log, room and /admin say the connection was refused, and what to check', async () => {
      expect(failures(lines).map((l) => l.msg)).toEqual([
        `AI connection failed: The connection to 127.0.0.1:${port} was refused (ECONNREFUSED): check the firewall, ` +
          'or set HTTPS_PROXY if this network reaches the internet through a proxy.',
      ]);
      const said = await mention(svc, '調子はどう？');
      expect(said).toContain(NOT_AVAILABLE);
      expect(said).not.toMatch(/混み合って|機密/);
      const turn = await waitFor(() =>
        svc.db.turnRecord.findFirst({ where: { roomId: String(room), kind: 'user_request' } }),
      );
      expect(turn).toMatchObject({ decision: 'ERROR', reasonCode: 'LLM_UNREACHABLE' });
      const ai = (await setupOf(svc)).items.find((i) => i.key === 'ai');
      expect(ai).toMatchObject({ state: 'problem' });
      expect(ai!.text).toBe(
        `127.0.0.1:${port} への接続が拒否されました: ファイアウォールを確かめるか、` +
          'プロキシ経由でインターネットに出るネットワークなら .env にプロキシを設定してください。',
      );
      expect(await svc.db.adminAlert.count({ where: { kind: 'llm_unavailable' } })).toBe(1);
    });
  });
});
