import { silentLogger } from '../../src/observability/logger';
import { safeRedactText } from '../../src/observability/redact';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { captureLogger } from '../helpers/logs';
import { startTestService, waitFor, type TestService } from '../helpers/service';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('/admin without ADMIN_TOKEN', () => {
  it('answers 404 everywhere and says so in the log', async () => {
    const { logger, lines } = captureLogger('warn');
    const svc = await startTestService({}, { logger });
    try {
      for (const path of ['/admin', '/admin/login', '/admin/api/overview'])
        expect((await fetch(`${svc.url}${path}`, { headers: bearer })).status).toBe(404);
      const said = 'ADMIN_TOKEN unset: /admin is off (it answers 404)';
      expect(lines.map((l) => l.msg)).toContain(said);
      // The service's logger redacts every message: an operator reads this line as it is.
      expect(safeRedactText(said)).toBe(said);
    } finally {
      await svc.close();
    }
  });
});

describe('/admin with ADMIN_TOKEN (R-O4)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  beforeAll(async () => {
    svc = await startTestService({ ADMIN_TOKEN }, { logger: silentLogger() });
  });
  afterAll(async () => {
    await svc.close();
    llm.stop();
  });
  const get = async (path: string) => {
    const res = await fetch(`${svc.url}/admin/api/${path}`, { headers: bearer });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('the JSON API wants the token: 401 without it or with a wrong one, nothing revealed', async () => {
    const tries: Record<string, string>[] = [
      {},
      { authorization: 'Bearer not-the-admin-token-000' },
      { authorization: `Basic ${ADMIN_TOKEN}` },
    ];
    for (const headers of tries) {
      const res = await fetch(`${svc.url}/admin/api/overview`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'authentication required' });
    }
    const page = await fetch(`${svc.url}/admin`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/admin/login?next=%2Fadmin');
    const login = await fetch(`${svc.url}/admin/login`);
    expect(login.status).toBe(200);
    expect(await login.text()).toContain('管理者トークン');
  });

  it('login: HttpOnly SameSite=Strict session; wrong token → the page again; cross-site → 403', async () => {
    const form = (token: string, origin?: string) =>
      fetch(`${svc.url}/admin/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(origin ? { origin } : {}) },
        body: new URLSearchParams({ token, next: '/admin' }).toString(),
      });
    const wrong = await form('definitely-wrong-token', svc.url);
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('トークンが正しくありません');
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect((await form(ADMIN_TOKEN, 'https://evil.example')).status).toBe(403);
    const ok = await form(ADMIN_TOKEN, svc.url);
    expect(ok.status).toBe(303);
    expect(ok.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    const page = await fetch(`${svc.url}/admin`, { headers: { cookie: ok.headers.get('set-cookie')!.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await page.text()).toContain('/admin/assets/uplot.js');
    expect((await fetch(`${svc.url}/admin/assets/uplot.js`)).status).toBe(200);
  });

  it('overview, audit search, turn inspector, pending confirmations, schedules, constitution audits', async () => {
    llm.script(
      replyCall('こんにちはウル！'),
      toolCall('create_task', { assignee: '田中花子', title: '出張の手配' }, { overall: 0.6 }),
    );
    const say = (memberId: string, text: string, roomId: string) =>
      fetch(`${svc.url}/console/api/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: svc.url },
        body: JSON.stringify({ memberId, text, roomId }),
      });
    await say('tanaka-taro', 'こんにちは、連絡先は taro@example.com です', 'c-admin-1');
    await waitFor(() => svc.db.turnRecord.findFirst({ where: { roomId: 'c-admin-1' } }), 8000, 'turn 1');
    await say('suzuki-kenji', '田中花子さんに出張の手配をお願い', 'c-admin-2');
    await waitFor(() => svc.db.turnRecord.findFirst({ where: { roomId: 'c-admin-2' } }), 8000, 'turn 2');
    await svc.db.turnRecord.create({
      data: {
        id: 't-violation',
        orgId: 'acme',
        platform: 'console',
        roomId: 'c-x',
        accountId: 'x',
        kind: 'user_request',
        model: 'claude-opus-5-5',
        reasoning: { intent_understanding: '社長なので権限がある' },
        decision: 'BLOCK',
        reasonCode: 'G_CONSTITUTION_PERMISSION_CLAIM',
        finalDecider: 'SYSTEM',
        totalMs: 5,
      },
    });

    const day = await get('overview?range=24h');
    expect(day.status).toBe(200);
    const buckets = day.body.buckets as { turns: number; costUsd: number; cacheReadShare: number | null }[];
    expect(buckets).toHaveLength(24);
    expect(buckets.at(-1)!.turns).toBeGreaterThanOrEqual(3);
    expect(buckets.at(-1)!.costUsd).toBeGreaterThan(0);
    expect(buckets.at(-1)!.cacheReadShare).toBeGreaterThan(0.5);
    expect((await get('overview?range=30d')).body.buckets as unknown[]).toHaveLength(30);
    expect((await get('overview?range=1y')).status).toBe(400);

    const byPerson = (await get('audit?person=田中太郎')).body.turns as { id: string; member: string; input: string }[];
    expect(byPerson).toHaveLength(1);
    expect(byPerson[0]!.member).toBe('田中太郎');
    expect(byPerson[0]!.input).not.toContain('taro@example.com');
    expect(((await get('audit?decision=CONFIRM')).body.turns as { member: string }[]).map((t) => t.member)).toEqual([
      '鈴木健二',
    ]);
    expect(((await get('audit?reason=G_CONSTITUTION')).body.turns as { id: string }[]).map((t) => t.id)).toEqual([
      't-violation',
    ]);
    expect((await get('audit?room=c-admin-2')).body.turns as unknown[]).toHaveLength(1);
    expect((await get('audit?from=2000-01-01&to=2000-01-02')).body.turns as unknown[]).toHaveLength(0);
    expect((await get('audit?decision=drop table')).status).toBe(400);

    const confirm = ((await get('audit?decision=CONFIRM')).body.turns as { id: string }[])[0]!;
    const detail = (await get(`turns/${confirm.id}`)).body.turn as Record<string, unknown>;
    expect(detail).toMatchObject({
      decision: 'CONFIRM',
      guardianAction: 'CONFIRM',
      guardianReason: 'G_CONFIDENCE_MEDIUM',
      authResult: 'ALLOWED',
      member: '鈴木健二',
    });
    const trace = (detail.proposals as { guardian: { trace: { rule: string; outcome: string }[] } }[])[0]!.guardian
      .trace;
    expect(trace.length).toBeGreaterThan(5);
    expect(trace).toContainEqual(expect.objectContaining({ outcome: 'CONFIRM', reasonCode: 'G_CONFIDENCE_MEDIUM' }));
    // The model's search for create_task, then its call.
    expect((detail.calls as { purpose: string }[]).map((c) => c.purpose)).toEqual(['tool_search', 'turn']);
    expect((await get('turns/nope')).status).toBe(404);

    const pending = (await get('pending')).body.pending as { member: string; tool: string }[];
    expect(pending).toEqual([expect.objectContaining({ member: '鈴木健二', tool: 'create_task' })]);

    const schedules = (await get('schedules')).body.schedules as { id: string; cron: string }[];
    expect(schedules.map((s) => s.id)).toEqual(['acme:daily-digest', 'acme:deadline-reminder', 'acme:goal-checkin']);

    const audits = (await get('audits/constitution?days=7')).body as {
      checks: Record<string, number>;
      turns: { id: string; findings: string[] }[];
    };
    expect(audits.turns.find((t) => t.id === 't-violation')!.findings).toEqual(
      expect.arrayContaining(['short_reasoning', 'permission_claim', 'violation_blocked']),
    );
    expect(audits.checks.permission_claim).toBeGreaterThanOrEqual(1);
    expect((await get('audits/constitution?days=0')).status).toBe(400);
  });
});

describe('/admin rate-limits failed tokens', () => {
  it('after 5 wrong tokens from one address: 429, even for the right token, until the window passes', async () => {
    const svc = await startTestService({ ADMIN_TOKEN });
    try {
      for (let i = 0; i < 5; i++) {
        expect(
          (
            await fetch(`${svc.url}/admin/api/overview`, {
              headers: { authorization: `Bearer wrong-${i}-xxxxxxxxxxxxxxxx` },
            })
          ).status,
        ).toBe(401);
      }
      const limited = await fetch(`${svc.url}/admin/api/overview`, { headers: bearer });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      const form = await fetch(`${svc.url}/admin/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: svc.url },
        body: `token=${ADMIN_TOKEN}`,
      });
      expect(form.status).toBe(429);
      expect(form.headers.get('set-cookie')).toBeNull();
    } finally {
      await svc.close();
    }
  });
});
