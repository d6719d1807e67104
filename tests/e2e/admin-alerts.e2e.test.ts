import fs from 'node:fs';
import nock from 'nock';
import { loadConfig } from '../../src/config/env';
import { silentLogger } from '../../src/observability/logger';
import { startService, type Service } from '../../src/service';
import { FakeAnthropic, FAKE_ANTHROPIC_URL, replyCall } from '../fakes/fake-anthropic';
import { FakeChatwork } from '../helpers/chatwork';
import { createTestDatabase } from '../helpers/db';
import { sampleDirectoryWith } from '../helpers/directory';
import { captureLogger } from '../helpers/logs';
import {
  BOT_ACCOUNT,
  CW_BASE,
  TEST_API_KEY,
  chatworkEnv,
  startTestService,
  waitFor,
  type TestService,
} from '../helpers/service';
import { proxiedTestDatabase } from '../helpers/tcp-proxy';

const adminRoom = (svc: Service) =>
  svc.db.conversationMessage.findMany({
    where: { platform: 'console', roomId: 'console-admin', role: 'assistant' },
    orderBy: { id: 'asc' },
  });

describe('admin alerts in the admin room (R-O5, seed 003 §15.1)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  beforeAll(async () => {
    svc = await startTestService({ LLM_DAILY_COST_LIMIT_USD: '1' });
  });
  afterAll(async () => {
    await svc.close();
  });
  afterEach(async () => {
    llm.stop();
    await svc.db.adminAlert.deleteMany();
    await svc.db.conversationMessage.deleteMany({ where: { roomId: 'console-admin' } });
  });

  it('cost guard crossed: one alert per window, written by the brain, however often it is crossed', async () => {
    await svc.db.llmUsage.create({
      data: {
        model: 'claude-opus-5-5',
        inputTokens: 1,
        outputTokens: 1,
        cacheWriteTokens: 0,
        cacheReadTokens: 0,
        costUsd: 2,
        durationMs: 10,
      },
    });
    llm.script(
      replyCall('こんにちはウル！何か手伝えることはあるウル？'),
      replyCall('管理者の皆さん、今日のAI利用額が上限に達したウル。/admin で確認してほしいウル🐺'),
    );
    await fetch(`${svc.url}/console/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: svc.url },
      body: JSON.stringify({ memberId: 'tanaka-taro', text: 'こんにちは', roomId: 'c-cost' }),
    });
    const [alert] = await waitFor(
      async () => {
        const m = await adminRoom(svc);
        return m.length === 1 ? m : null;
      },
      10000,
      'alert in the admin room',
    );
    const rec = await waitFor(
      () => svc.db.turnRecord.findFirst({ where: { reasonCode: 'A_LLM_COST_LIMIT' } }),
      5000,
      'alert record',
    );
    expect(rec).toMatchObject({ decision: 'NOTICE', finalDecider: 'LLM', kind: 'notification' });
    expect(alert!.text).toBe(rec.finalReply);
    // The brain was asked with the alert's facts in words: the kind as admins read it, no internal code.
    const asked = llm.requests
      .map((r) => JSON.stringify(r))
      .find((r) => r.includes('本日のLLM利用額が上限に達しました'));
    expect(asked).toBeDefined();
    expect(asked).not.toContain('llm_cost_limit');
    // Another instance crossing it in the same window: counted, not sent again.
    expect(
      await svc.alerts.raise({
        kind: 'llm_cost_limit',
        severity: 'critical',
        facts: { spentUsd: '2.10', limitUsd: 1 },
      }),
    ).toBe('suppressed');
    await new Promise((r) => setTimeout(r, 400));
    expect(await adminRoom(svc)).toHaveLength(1);
    expect(await svc.db.adminAlert.findMany()).toEqual([
      expect.objectContaining({ kind: 'llm_cost_limit', repeats: 1 }),
    ]);
    await svc.db.llmUsage.deleteMany();
  });

  it('§15.1 thresholds and constitution violations: each kind once per window', async () => {
    const turn = (i: number, decision: string, reasonCode: string, proposals: unknown[] = []) => ({
      id: `t-alert-${i}`,
      orgId: 'acme',
      platform: 'console',
      roomId: 'c-x',
      accountId: 'tanaka-taro',
      decision,
      reasonCode,
      finalDecider: 'SYSTEM',
      totalMs: 100,
      proposals: proposals as object[],
    });
    await svc.db.turnRecord.deleteMany();
    // The model answers 500 (busy) to the alerts' writing: the persona template carries the facts. (A request no
    // fake answers at all is a network the service cannot reach: an alert of its own.)
    llm.script();
    const exec = (status: string) => [
      { step: 1, tool: 'create_task', guardian: { action: 'ALLOW', reasonCode: 'G_OK' }, execution: { status, ms: 3 } },
    ];
    await svc.db.turnRecord.createMany({
      data: [
        ...Array.from({ length: 24 }, (_, i) =>
          turn(i, 'EXECUTED', 'T_EXECUTED', exec(i < 2 ? 'internal_error' : 'ok')),
        ),
        ...Array.from({ length: 4 }, (_, i) => turn(100 + i, 'BLOCK', 'G_CONFIDENTIAL')),
        turn(200, 'BLOCK', 'G_CONSTITUTION_PERMISSION_CLAIM'),
      ],
    });
    await svc.db.llmUsage.createMany({
      data: Array.from({ length: 25 }, (_, i) => ({
        model: 'claude-opus-5-5',
        inputTokens: 1,
        outputTokens: 1,
        cacheWriteTokens: 0,
        cacheReadTokens: 0,
        costUsd: 0,
        durationMs: i < 3 ? 2000 : 14000,
      })),
    });
    const raised = (await svc.monitor.check()).map((a) => a.kind).sort();
    // 29 turns: 5 blocked (17.2 % > 10 %), none confirmed; 24 executions with 2 handler failures (8.3 % > 5 %).
    expect(raised).toEqual(['block_rate', 'constitution_violation', 'llm_latency_p95', 'tool_error_rate']);
    expect((await svc.monitor.check()).length).toBe(4);
    const rows = await svc.db.adminAlert.findMany({ orderBy: { kind: 'asc' } });
    expect(rows.map((r) => [r.kind, r.repeats])).toEqual([
      ['block_rate', 1],
      ['constitution_violation', 1],
      ['llm_latency_p95', 1],
      ['tool_error_rate', 1],
    ]);
    expect(rows.find((r) => r.kind === 'constitution_violation')!.facts).toMatchObject({
      count: 1,
      reasonCodes: 'G_CONSTITUTION_PERMISSION_CLAIM',
      turnIds: 't-alert-200',
    });
    // No scripted model answer: the brain is unavailable, so the persona template carries the facts.
    const msgs = await waitFor(
      async () => {
        const m = await adminRoom(svc);
        return m.length === 4 ? m : null;
      },
      10000,
      'four alerts',
    );
    const all = msgs.map((m) => m.text).join('\n');
    expect(all).toContain('ブロックの発生率がしきい値を超えています');
    expect(all).toContain('17.2%');
    expect(all).toContain('LLMの応答時間（p95）');
    expect(all).toContain('t-alert-200');
    await new Promise((r) => setTimeout(r, 300));
    expect(await adminRoom(svc)).toHaveLength(4);
    await svc.db.turnRecord.deleteMany({ where: { id: { startsWith: 't-alert-' } } });
    await svc.db.llmUsage.deleteMany();
  });
});

describe('admin alerts without the database and with a broken configuration', () => {
  afterEach(() => nock.cleanAll());

  it('database outage: straight to the ChatWork admin room once per window; recovery once', async () => {
    const { proxy, url: viaProxy } = await proxiedTestDatabase();
    const directory = sampleDirectoryWith({
      schedules: '',
      edits: [
        [
          '{ platform: chatwork, id: "5001", name: 営業部, authority: member }',
          '{ platform: chatwork, id: "5001", name: 営業部, authority: member, admin: true }',
        ],
      ],
    });
    const cw = new FakeChatwork().install();
    new FakeAnthropic().script(); // busy (500): the alerts are written from the persona template
    nock(CW_BASE.replace('/v2', ''))
      .persist()
      .get('/v2/rooms/5001/members')
      .reply(200, [{ account_id: 9999, name: 'Hisho', role: 'member' }]);
    const svc = await startService(
      loadConfig({
        NODE_ENV: 'test',
        PORT: '0',
        LOG_LEVEL: 'silent',
        DATABASE_URL: viaProxy,
        ANTHROPIC_API_KEY: TEST_API_KEY,
        ANTHROPIC_BASE_URL: FAKE_ANTHROPIC_URL,
        LLM_MAX_RETRIES: '0',
        LLM_DAILY_COST_LIMIT_USD: '0',
        SELF_CRITIQUE_RATE: '0',
        ORG_DIRECTORY_FILE: directory,
        ...chatworkEnv(),
        CONSOLE_ENABLED: 'false',
      }),
      { logger: silentLogger(), workerPollMs: 50, chatworkBotAccountId: BOT_ACCOUNT },
    );
    const posts = (needle: string) => cw.posts.filter((p) => p.roomId === '5001' && p.body.includes(needle));
    try {
      proxy.cut();
      await waitFor(() => posts('データベースに接続できません').length === 1, 15000, 'outage alert');
      await new Promise((r) => setTimeout(r, 2500));
      expect(posts('データベースに接続できません')).toHaveLength(1);
      proxy.restore();
      await waitFor(() => posts('復旧しました').length === 1, 20000, 'recovery alert');
      expect(await svc.db.adminAlert.findMany()).toEqual([
        expect.objectContaining({ kind: 'db_recovered', repeats: 0 }),
      ]);
      await new Promise((r) => setTimeout(r, 500));
      expect(posts('復旧しました')).toHaveLength(1);
      expect(cw.posts.every((p) => !p.body.includes('postgresql://'))).toBe(true);
    } finally {
      await svc.stop();
      await proxy.stop();
      fs.rmSync(directory, { force: true });
    }
  }, 60000);

  it('an admin room that does not exist, or none at all, is a start-up warning', async () => {
    const directory = sampleDirectoryWith({
      schedules: '',
      edits: [
        [
          '{ platform: console, id: console-admin, name: コンソール（管理者）, authority: member, admin: true }',
          '{ platform: chatwork, id: "5999", name: 管理者, authority: member, admin: true }',
        ],
      ],
    });
    nock(CW_BASE.replace('/v2', ''))
      .get('/v2/rooms/5999/members')
      .reply(404, { errors: ['Not found'] });
    const t = await createTestDatabase();
    await t.close();
    const { logger, lines } = captureLogger('warn');
    const svc = await startService(
      loadConfig({
        NODE_ENV: 'test',
        PORT: '0',
        DATABASE_URL: t.url,
        ANTHROPIC_API_KEY: TEST_API_KEY,
        ANTHROPIC_BASE_URL: FAKE_ANTHROPIC_URL,
        LLM_DAILY_COST_LIMIT_USD: '0',
        SELF_CRITIQUE_RATE: '0',
        ORG_DIRECTORY_FILE: directory,
        ...chatworkEnv(),
      }),
      { logger, chatworkBotAccountId: BOT_ACCOUNT },
    );
    try {
      await waitFor(
        () => lines.find((l) => String(l.msg).includes('does not exist or the bot is not a member')),
        8000,
        'warning',
      );
      expect(lines.map((l) => l.msg)).toContain(
        'admin room chatwork "5999" does not exist or the bot is not a member: alerts cannot be posted there',
      );
    } finally {
      await svc.stop();
    }
    const none = sampleDirectoryWith({
      schedules: '',
      edits: [
        [
          '{ platform: console, id: console-admin, name: コンソール（管理者）, authority: member, admin: true }',
          '{ platform: console, id: console-admin, name: コンソール（管理者）, authority: member }',
        ],
      ],
    });
    const t2 = await createTestDatabase();
    await t2.close();
    const second = captureLogger('warn');
    const svc2 = await startService(
      loadConfig({
        NODE_ENV: 'test',
        PORT: '0',
        DATABASE_URL: t2.url,
        ORG_DIRECTORY_FILE: none,
        LLM_DAILY_COST_LIMIT_USD: '0',
        SELF_CRITIQUE_RATE: '0',
      }),
      { logger: second.logger },
    );
    await svc2.stop();
    expect(second.lines.map((l) => l.msg)).toContain(
      'no admin room in the directory (rooms: admin: true): admin alerts go to the log only',
    );
    fs.rmSync(directory, { force: true });
    fs.rmSync(none, { force: true });
  }, 30000);
});
