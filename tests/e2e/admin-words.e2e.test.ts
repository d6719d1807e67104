import { silentLogger } from '../../src/observability/logger';
import { startTestService, type TestService } from '../helpers/service';

const ADMIN_TOKEN = 'admin-token-for-words-0123456789';
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** The /admin API in the operator's language: words for codes, the organisation's days, CSV for Excel. */
describe('/admin API in words and in the organisation’s time zone', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ ADMIN_TOKEN, BOT_TIMEZONE: 'Asia/Tokyo' }, { logger: silentLogger() });
    const turn = (id: string, createdAt: string, extra: Record<string, unknown> = {}) =>
      svc.db.turnRecord.create({
        data: {
          id,
          orgId: 'acme',
          platform: 'console',
          roomId: 'c-words',
          accountId: 'watanabe-sho',
          memberId: 'watanabe-sho',
          kind: 'user_request',
          decision: 'DENIED',
          reasonCode: 'Z_LEVEL_TOO_LOW',
          finalDecider: 'SYSTEM',
          totalMs: 12,
          createdAt: new Date(createdAt),
          ...extra,
        },
      });
    // 2026-01-10 15:30 UTC is 2026-01-11 00:30 in Tokyo: the organisation's 11 January.
    await turn('t-tokyo-11th', '2026-01-10T15:30:00Z', { inputRedacted: '=HYPERLINK("x"),「見積」' });
    await turn('t-tokyo-10th', '2026-01-10T14:30:00Z', { inputRedacted: '普通の依頼' });
    await turn('t-button', '2026-01-10T14:40:00Z', {
      decision: 'EXECUTED',
      reasonCode: 'S_USER_APPROVED',
      finalDecider: 'USER',
      inputRedacted: '1',
    });
  });
  afterAll(async () => {
    await svc.close();
  });
  const get = (path: string, headers: Record<string, string> = bearer) =>
    fetch(`${svc.url}/admin/api/${path}`, { headers });

  it('the new pages stay behind the admin token', async () => {
    for (const path of ['labels', 'audit.csv', 'members/watanabe-sho', 'rooms/c-words'])
      expect([path, (await get(path, {})).status]).toEqual([path, 401]);
  });

  it('labels: every reason in words with its next step, and the organisation’s time zone', async () => {
    const labels = (await (await get('labels')).json()) as {
      timezone: string;
      reasons: Record<string, { label: string; next: string }>;
      rules: Record<string, string>;
    };
    expect(labels.timezone).toBe('Asia/Tokyo');
    expect(labels.reasons.Z_LEVEL_TOO_LOW!.label).toBe('権限レベル不足');
    expect(labels.rules['dangerous.risk']).toBe('操作の危険度');
  });

  it('a date range is the organisation’s days, not UTC days', async () => {
    const ids = async (q: string) =>
      ((await (await get(`audit?${q}`)).json()) as { turns: { id: string }[] }).turns.map((t) => t.id).sort();
    expect(await ids('from=2026-01-11&to=2026-01-11')).toEqual(['t-tokyo-11th']);
    expect(await ids('from=2026-01-10&to=2026-01-10')).toEqual(['t-button', 't-tokyo-10th']);
    expect(await ids('room=c-words&reason=S_USER_APPROVED')).toEqual(['t-button']);
  });

  it('CSV: BOM, Japanese headings and words, Tokyo times, quoted fields, no formula from a message', async () => {
    const res = await get('audit.csv?room=c-words&from=2026-01-10&to=2026-01-11');
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="hisho-audit-/);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const [head, ...rows] = bytes.toString('utf8').slice(1).split('\r\n').filter(Boolean);
    expect(head).toBe(
      '日時,種類,人,ルーム,判断,理由,理由の説明,次にすること,理由コード,決定者,処理時間（ミリ秒）,費用（USD）,依頼,返答,ターンID',
    );
    expect(rows).toHaveLength(3);
    const eleventh = rows.find((r) => r.endsWith(',t-tokyo-11th'))!;
    expect(eleventh.startsWith('2026/01/11 00:30:00,会話,渡辺翔,c-words,権限で拒否,権限レベル不足,')).toBe(true);
    // A message starting with = is text in Excel, not a formula; its quotes are doubled inside quotes.
    expect(eleventh).toContain(`"'=HYPERLINK(""x""),「見積」"`);
    expect(rows.find((r) => r.endsWith(',t-button'))).toContain('「承認」を選択（ボタンまたは「1」）');
  });

  it('a wrong turn id, member or room says what to do, in Japanese', async () => {
    for (const [path, text] of [
      ['turns/no-such-turn', '監査ログで検索し'],
      ['turns/bad id!', '監査ログで検索し'],
      ['members/nobody', 'ディレクトリにいません'],
      ['rooms/no-room', 'ルームの記録はありません'],
      ['nothing-here', '上のメニューから選んでください'],
    ]) {
      const res = await get(path!);
      expect([path, res.status]).toEqual([path, 404]);
      expect(((await res.json()) as { error: string }).error).toContain(text);
    }
    const bad = await get('audit?decision=drop table');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe(
      '検索条件を読めませんでした（判断）。入力を直して検索し直してください。',
    );
  });

  it('a member’s page: their turns, waiting confirmations and cost', async () => {
    const view = (await (await get('members/watanabe-sho')).json()) as {
      title: string;
      turns: { id: string }[];
      pending: unknown[];
      cost30d: { turns: number };
    };
    expect(view.title).toBe('渡辺翔さん');
    expect(view.turns.map((t) => t.id)).toEqual(['t-tokyo-11th', 't-button', 't-tokyo-10th']);
    expect(view.pending).toEqual([]);
  });
});
