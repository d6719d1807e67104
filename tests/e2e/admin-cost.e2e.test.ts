import { silentLogger } from '../../src/observability/logger';
import { startTestService, type TestService } from '../helpers/service';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

/** The /admin cost panel: cost per conversation, the month's forecast, by kind and model, in dollars and yen. */
describe('/admin cost per conversation and monthly forecast (issue 39)', () => {
  let svc: TestService;
  // Friday 2026-11-27 12:00 in Tokyo: 26.5 days of November gone, 3.5 left.
  const now = new Date('2026-11-27T03:00:00Z');
  const ago = (hours: number) => new Date(now.getTime() - hours * 3_600_000);

  beforeAll(async () => {
    svc = await startTestService({ ADMIN_TOKEN, COST_JPY_PER_USD: '140' }, { logger: silentLogger(), now: () => now });
  });
  afterAll(() => svc.close());

  it('counts each message as a conversation and shares its summaries and critiques among them', async () => {
    const turn = (id: string, hoursAgo: number, kind = 'user_request') => ({
      id,
      orgId: 'acme',
      platform: 'console',
      roomId: 'c-cost',
      accountId: 'suzuki-kenji',
      kind,
      decision: 'REPLY',
      reasonCode: 'B_TEXT_RESPONSE',
      finalDecider: 'LLM',
      totalMs: 5,
      createdAt: ago(hoursAgo),
    });
    await svc.db.turnRecord.createMany({
      data: [turn('c1', 1), turn('c2', 2), turn('c3', 2), turn('c4', 3), turn('n1', 1, 'notification')],
    });
    const call = (turnId: string | null, model: string, purpose: string, usd: number, hoursAgo: number) => ({
      turnId,
      orgId: 'acme',
      model,
      purpose,
      inputTokens: 1,
      outputTokens: 1,
      cacheWriteTokens: 0,
      cacheReadTokens: 0,
      costUsd: usd,
      durationMs: 1,
      createdAt: ago(hoursAgo),
    });
    await svc.db.llmUsage.createMany({
      data: [
        call('c1', 'claude-opus-5-5', 'turn', 0.02, 1),
        call('c1', 'claude-opus-5-5', 'step_2', 0.01, 1),
        call('c2', 'claude-opus-5-5', 'turn', 0.02, 2),
        call('c3', 'claude-haiku-5-5', 'report_confirmed', 0.001, 2),
        call('c4', 'claude-opus-5-5', 'turn', 0.02, 3),
        call(null, 'claude-haiku-5-5', 'conversation_summary', 0.001, 2),
        call('c2', 'claude-opus-5-5', 'self_critique', 0.01, 2),
        call('n1', 'claude-haiku-5-5', 'notice', 0.002, 1),
        // Earlier this month (not today): in the month and, 3 days ago, in the last week.
        call(null, 'claude-opus-5-5', 'turn', 1.0, 72),
        call(null, 'claude-opus-5-5', 'turn', 2.0, 24 * 20),
      ],
    });

    const res = await fetch(`${svc.url}/admin/api/cost?range=24h`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const c = (await res.json()) as {
      conversations: number;
      jpyPerUsd: number;
      perConversation: { usd: number; yen: number };
      monthToDate: { usd: number; yen: number };
      forecast: { usd: number; yen: number };
      rows: { kind: string; model: string; calls: number; usd: number; yen: number; perConversation: unknown }[];
    };
    expect(c.conversations).toBe(4);
    expect(c.jpyPerUsd).toBe(140);
    // (0.02 + 0.01 + 0.02 + 0.001 + 0.02 + 0.001 summary + 0.01 critique) / 4; the notice is not a conversation's.
    expect(c.perConversation.usd).toBeCloseTo(0.082 / 4, 6);
    expect(c.perConversation.yen).toBeCloseTo((0.082 / 4) * 140, 6);
    expect(c.monthToDate.usd).toBeCloseTo(3.084, 6);
    // The month so far, then the last 7 days' daily average (1.084 / 7) for the 3.5 days left.
    expect(c.forecast.usd).toBeCloseTo(3.084 + (1.084 / 7) * 3.5, 4);
    expect(c.forecast.yen).toBeCloseTo(c.forecast.usd * 140, 4);
    expect(c.rows).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: '会話',
          model: 'Claude Opus 5.5',
          calls: 4,
          perConversation: { usd: expect.closeTo(0.07 / 4, 6), yen: expect.closeTo((0.07 / 4) * 140, 6) },
        }),
        expect.objectContaining({ kind: '会話', model: 'Claude Haiku 5.5', calls: 1 }),
        expect.objectContaining({ kind: '会話の要約', model: 'Claude Haiku 5.5', calls: 1 }),
        expect.objectContaining({ kind: '自己批判', model: 'Claude Opus 5.5', calls: 1 }),
        expect.objectContaining({ kind: '通知', model: 'Claude Haiku 5.5', calls: 1, perConversation: null }),
      ]),
    );
    // Words only: no model ids, purposes or kinds as codes.
    expect(JSON.stringify(c.rows)).not.toMatch(/claude-|user_request|notification|self_critique/);
    expect(
      (await fetch(`${svc.url}/admin/api/cost?range=1y`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))
        .status,
    ).toBe(400);
  });
});
