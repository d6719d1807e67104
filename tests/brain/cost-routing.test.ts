import { toAnthropicRequest } from '../../src/brain/anthropic-client';
import { CacheLifetime, chooseCacheTtl, MIN_GAPS } from '../../src/brain/cache-lifetime';
import { CostGuard } from '../../src/brain/cost-guard';
import { costUsd, priceOf } from '../../src/brain/pricing';
import { routeModel } from '../../src/brain/routing';
import { silentLogger } from '../../src/observability/logger';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

const rule = { mainModel: 'claude-opus-5-5', smallModel: 'claude-haiku-5-5', routing: true };
const opus = priceOf('claude-opus-5-5');
/** `n` gaps of `minutes` each. */
const gaps = (n: number, minutes: number) => Array.from({ length: n }, () => minutes);

describe('the routing rule', () => {
  it('keeps every call that may act on the main model, whatever its purpose', () => {
    for (const purpose of ['turn', 'notice', 'report_confirmed', 'conversation_summary', 'self_critique'])
      expect(routeModel({ purpose, mayAct: true }, rule)).toBe('claude-opus-5-5');
  });

  it('calls offered no capability tool go to the small model: context answers, notices, reports, summaries', () => {
    for (const purpose of ['turn', 'notice', 'report_confirmed', 'conversation_summary'])
      expect(routeModel({ purpose, mayAct: false }, rule)).toBe('claude-haiku-5-5');
    // The reviewer stays on the main model: a weaker reviewer would tell little about the main model's decisions.
    expect(routeModel({ purpose: 'self_critique', mayAct: false }, rule)).toBe('claude-opus-5-5');
  });

  it('off: every call on the main model', () => {
    expect(routeModel({ purpose: 'notice', mayAct: false }, { ...rule, routing: false })).toBe('claude-opus-5-5');
  });
});

describe('the cache lifetime by traffic', () => {
  it('a turn every 10–40 minutes: the prefix kept an hour (the 5-minute cache expires each time)', () => {
    const day = [...gaps(10, 12), ...gaps(10, 25), ...gaps(5, 40), 15 * 60]; // one night
    const c = chooseCacheTtl(day, opus);
    expect(c.ttl).toBe('1h');
    expect(c.cost1h).toBeLessThan(c.cost5m);
  });

  it('a busy office (gaps under 5 minutes) keeps 5 minutes: both lifetimes read, the hour writes dearer', () => {
    expect(chooseCacheTtl([...gaps(200, 2), 15 * 60], opus).ttl).toBe('5m');
  });

  it('an office that speaks every few hours keeps 5 minutes: both write again, the hour at 2× instead of 1.25×', () => {
    expect(chooseCacheTtl([...gaps(30, 120), ...gaps(5, 20)], opus).ttl).toBe('5m');
  });

  it('break-even: the hour wins when gaps of 5–60 min outnumber 0.625 × the gaps over an hour (Opus 5.5)', () => {
    // (2 − 1.25) / (1.25 − 0.05) = 0.625 writes of the prefix.
    expect(chooseCacheTtl([...gaps(13, 30), ...gaps(20, 90)], opus).ttl).toBe('1h'); // 13 > 12.5
    expect(chooseCacheTtl([...gaps(12, 30), ...gaps(20, 90)], opus).ttl).toBe('5m'); // 12 < 12.5
  });

  it('too few turns measured: the 5-minute default', () => {
    expect(chooseCacheTtl(gaps(MIN_GAPS - 1, 20), opus).ttl).toBe('5m');
  });

  describe('from the recorded turns (PostgreSQL)', () => {
    let t: TestDatabase;
    beforeAll(async () => {
      t = await createTestDatabase();
    });
    afterAll(() => t.close());

    it("reads the organisation's turn arrivals from llm_usage and decides per organisation", async () => {
      const now = new Date('2026-11-27T08:00:00Z');
      const row = (orgId: string, minutesAgo: number, purpose = 'turn') => ({
        orgId,
        model: 'claude-opus-5-5',
        purpose,
        inputTokens: 1,
        outputTokens: 1,
        cacheWriteTokens: 0,
        cacheReadTokens: 0,
        costUsd: 0,
        durationMs: 1,
        createdAt: new Date(now.getTime() - minutesAgo * 60_000),
      });
      // acme: a turn every 20 minutes for 10 hours; quiet: one every 3 hours for a week; steps of acme's turns
      // a few seconds after them (not turns: they must not make the traffic look dense).
      const acme = Array.from({ length: 30 }, (_, i) => row('acme', i * 20));
      const steps = Array.from({ length: 30 }, (_, i) => row('acme', i * 20 - 0.1, 'step_2'));
      const quiet = Array.from({ length: 50 }, (_, i) => row('quiet', i * 180));
      await t.db.llmUsage.createMany({ data: [...acme, ...steps, ...quiet] });

      const lifetime = new CacheLifetime({ db: t.db, mode: 'auto', model: 'claude-opus-5-5', now: () => now });
      expect(await lifetime.ttlFor('acme')).toBe('1h');
      expect(await lifetime.ttlFor('quiet')).toBe('5m');
      expect(await lifetime.ttlFor('nobody')).toBe('5m');
      expect(await new CacheLifetime({ db: t.db, mode: '1h', model: 'm' }).ttlFor('quiet')).toBe('1h');
    });

    it('the cost guard routes, keeps its daily limit (fallback for the main model), gives the lifetime', async () => {
      const guard = (limit: number) =>
        new CostGuard({
          db: t.db,
          logger: silentLogger(),
          model: 'claude-opus-5-5',
          smallModel: 'claude-haiku-5-5',
          routing: true,
          cacheLifetime: { ttlFor: async () => '1h' },
          fallbackModel: 'claude-sonnet-5-5',
          dailyLimitUsd: limit,
          action: 'fallback_model',
          timezone: 'Asia/Tokyo',
        });
      const acting = { purpose: 'turn', orgId: 'acme', mayAct: true };
      const notice = { purpose: 'notice', orgId: 'acme', mayAct: false };
      expect(await guard(0).select(acting)).toEqual({ model: 'claude-opus-5-5', cacheTtl: '1h' });
      expect(await guard(0).select(notice)).toEqual({ model: 'claude-haiku-5-5', cacheTtl: '1h' });
      // Today's spend (recorded now) is over a limit of one cent: the main model's calls fall back.
      await t.db.llmUsage.create({
        data: {
          orgId: 'acme',
          model: 'claude-opus-5-5',
          inputTokens: 1,
          outputTokens: 1,
          cacheWriteTokens: 0,
          cacheReadTokens: 0,
          costUsd: 1,
          durationMs: 1,
        },
      });
      expect(await guard(0.01).select(acting)).toEqual({ model: 'claude-sonnet-5-5', cacheTtl: '1h' });
      expect(await guard(0.01).select(notice)).toEqual({ model: 'claude-haiku-5-5', cacheTtl: '1h' });
    });
  });
});

describe('the hour-long cache on the wire and in the bill', () => {
  const req = (cacheTtl?: '5m' | '1h') =>
    toAnthropicRequest({
      model: 'claude-opus-5-5',
      maxTokens: 100,
      system: 'rules',
      tools: [
        { name: 'a', description: 'a', inputSchema: { type: 'object' } },
        { name: 'b', description: 'b', inputSchema: { type: 'object' } },
      ],
      messages: [{ role: 'user', content: 'hi' }],
      cachePrefix: true,
      cacheTtl,
    });

  it('both breakpoints of the prefix carry the lifetime (two of four, none shorter before a longer one)', () => {
    const hour = req('1h');
    expect(hour.tools.map((t) => t.cache_control)).toEqual([undefined, { type: 'ephemeral', ttl: '1h' }]);
    expect(hour.system[0]!.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    const five = req();
    expect(five.tools[1]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(five.system[0]!.cache_control).toEqual({ type: 'ephemeral' });
  });

  it('prices hour-long writes at 2× input and five-minute writes at 1.25×', () => {
    const u = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 1_000_000 };
    expect(costUsd('claude-opus-5-5', u)).toBe(5);
    expect(costUsd('claude-opus-5-5', { ...u, cacheWrite1hTokens: 1_000_000 })).toBe(8);
    expect(costUsd('claude-opus-5-5', { ...u, cacheWrite1hTokens: 400_000 })).toBe(3 + 3.2);
  });
});
