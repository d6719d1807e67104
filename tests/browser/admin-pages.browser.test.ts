import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { buttonKey } from '../../src/confirmations/button-key';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { startTestService, waitFor, type TestService } from '../helpers/service';
import { ARTIFACTS, describeBrowser, launchBrowser, screenshot } from './browser';

const ADMIN_TOKEN = 'browser-admin-token-pages-0123456789';
/** Raw codes and dotted identifiers an operator should never have to read. */
const RAW = /[A-Z]_[A-Z_]+|[a-z]+\.[a-z_]+/g;

/**
 * /admin after a morning of traffic, in headless Chromium with Japanese fonts, the browser in UTC and the
 * organisation in Asia/Tokyo: every page in words (raw tokens counted per page), one time zone, numbers
 * that add up, the inspector as a story, per-member and per-room views, search and CSV export.
 */
describeBrowser('/admin in the operator’s language (headless Chromium)', () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  const llm = new FakeAnthropic();
  const errors: string[] = [];
  const counts: Record<string, { count: number; tokens: string[] }> = {};

  const say = async (memberId: string, text: string, roomId: string, key?: string) => {
    const res = await fetch(`${svc.url}/console/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: svc.url },
      body: JSON.stringify({ memberId, text, roomId, ...(key ? { key } : {}) }),
    });
    if (res.status >= 300) throw new Error(`console post ${res.status}: ${await res.text()}`);
  };
  const turns = (roomId: string) => svc.db.turnRecord.count({ where: { roomId } });
  const waitTurns = (roomId: string, n: number) =>
    waitFor(async () => (await turns(roomId)) >= n, 10000, `${n} turns in ${roomId}`);

  /** Counts raw tokens in the page's visible text and keeps a screenshot. */
  async function measure(name: string): Promise<string> {
    const text = (await page.evaluate('document.body.innerText')) as string;
    const tokens = [...text.matchAll(RAW)].map((m) => m[0]);
    counts[name] = { count: tokens.length, tokens: [...new Set(tokens)] };
    await screenshot(page, `admin-${name}`);
    return text;
  }

  beforeAll(async () => {
    svc = await startTestService({ ADMIN_TOKEN, BOT_TIMEZONE: 'Asia/Tokyo' });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1360, height: 900 }, locale: 'ja-JP', timezoneId: 'UTC' });
    page.setDefaultTimeout(8000);
    page.on('pageerror', (err) => {
      errors.push(err.message);
    });

    // A morning of traffic: a greeting, a task confirmed by button, one by text, a denied request whose
    // reply claimed success, a cancelled one, a model outage, and a question left open.
    llm.script(replyCall('おはようウル！'));
    await say('suzuki-kenji', 'おはよう', 'c-morning');
    await waitTurns('c-morning', 1);

    llm.script(toolCall('create_task', { assignee: '田中花子', title: '企画書', due: '2030-11-28' }, { overall: 0.6 }));
    await say('suzuki-kenji', '田中花子さんに企画書のタスクをお願い、期限は2030年11月28日', 'c-morning');
    await waitTurns('c-morning', 2);
    const asked = await svc.db.pendingAction.findFirstOrThrow({ where: { roomId: 'c-morning', status: 'pending' } });
    llm.script(replyCall('田中花子さんに企画書のタスクを登録したウル🐺'));
    await say('suzuki-kenji', '承認', 'c-morning', buttonKey(asked.id, 'approve', asked.confirmationsGiven));
    await waitFor(
      async () => (await svc.db.pendingAction.findUnique({ where: { id: asked.id } }))?.status === 'executed',
      10000,
      'approved by button',
    );

    llm.script(toolCall('create_task', { assignee: '田中花子', title: '見積書の確認' }, { overall: 0.6 }));
    await say('suzuki-kenji', '田中花子さんに見積書の確認をお願い', 'c-text');
    await waitTurns('c-text', 1);
    llm.script(replyCall('見積書の確認をお願いしたウル'));
    await say('suzuki-kenji', 'はい', 'c-text');
    await waitTurns('c-text', 2);

    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '議事録の清書' }),
      replyCall('田中太郎さんに『議事録の清書』のタスクを登録しました！'),
      replyCall('ごめんなさいウル、いまの権限ではほかの方のタスクは登録できなかったウル🐺'),
    );
    await say('watanabe-sho', '田中さんに議事録の清書のタスクを作って', 'c-denied');
    await waitTurns('c-denied', 1);

    llm.script(toolCall('create_task', { assignee: '田中花子', title: '出張の手配' }, { overall: 0.6 }));
    await say('suzuki-kenji', '田中花子さんに出張の手配をお願い', 'c-cancel');
    await waitTurns('c-cancel', 1);
    await say('suzuki-kenji', 'いいえ', 'c-cancel');
    await waitTurns('c-cancel', 2);

    llm.script({ status: 529, errorType: 'overloaded_error' });
    await say('tanaka-taro', '今日の予定を教えて', 'c-outage');
    await waitTurns('c-outage', 1);
    expect(llm.pending).toBe(0);

    llm.script(toolCall('create_task', { assignee: '田中花子', title: '備品の発注' }, { overall: 0.6 }));
    await say('suzuki-kenji', '田中花子さんに備品の発注をお願い', 'c-open');
    await waitTurns('c-open', 1);

    await page.goto(`${svc.url}/admin/login`);
    await page.fill('#token', ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${svc.url}/admin`), page.click('button[type=submit]')]);
  }, 90000);

  afterAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.writeFileSync(path.join(ARTIFACTS, 'admin-raw-tokens.json'), JSON.stringify(counts, null, 2));
    llm.stop();
    await browser?.close();
    await svc?.close();
  });

  it('every page in words: no raw codes or identifiers in the visible text', async () => {
    const tabs = ['overview', 'audit', 'pending', 'schedules', 'constitution', 'alerts', 'failed'];
    for (const tab of [...tabs, 'members', 'rooms', 'policies']) {
      await page.click(`#nav a[href="#${tab}"]`);
      await page.waitForSelector(`section#${tab}.active tbody tr, section#${tab}.active .card`);
      await page.waitForTimeout(300);
      await measure(tab);
    }
    const denied = await svc.db.turnRecord.findFirstOrThrow({ where: { roomId: 'c-denied' } });
    await page.goto(`${svc.url}/admin#turn/${denied.id}`);
    await page.waitForSelector('#turn-steps .step');
    const story = await measure('turn-denied');
    // The proposal in the tool's own words, the Gate's reason and what to do, the reply's correction.
    expect(story).toContain('田中太郎さんにタスクを作成します。');
    expect(story).toContain('次にすること: 必要なら上長から依頼してもらうか');
    expect(story).toContain('返答の書き直し');
    const summary = Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v.count]));
    expect(summary).toEqual(Object.fromEntries(Object.keys(summary).map((k) => [k, 0])));
    expect(errors).toEqual([]);
  }, 60000);

  it('one time zone: tables, chart axes and legends in Asia/Tokyo while the browser is in UTC', async () => {
    const first = await svc.db.turnRecord.findFirstOrThrow({ where: { roomId: 'c-morning' } });
    const tokyo = new Intl.DateTimeFormat('ja-JP', {
      timeZone: 'Asia/Tokyo',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
    }).format(first.createdAt);
    await page.goto(`${svc.url}/admin#audit`);
    await page.waitForSelector('#audit-rows tr[data-id]');
    expect(await page.textContent('#audit-rows')).toContain(tokyo);
    await page.goto(`${svc.url}/admin#overview`);
    await page.waitForSelector('#c-turns canvas');
    // The last hourly tick is the hour of now in Tokyo (UTC+9), written 「N時」.
    const hourTokyo =
      Number(
        new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Tokyo', hour: 'numeric', hour12: false }).format(new Date()),
      ) % 24;
    const legend = await page.textContent('#c-turns .u-legend');
    expect(legend).toContain('日時');
    expect(legend).not.toContain('Time');
    const ticks = await page.evaluate(
      `(() => { const u = document.querySelector('#c-turns .uplot'); return u ? u.innerText : ''; })()`,
    );
    expect(String(ticks)).not.toMatch(/[0-9](am|pm)/);
    const over = (await page.locator('#c-turns .u-over').boundingBox())!;
    await page.hover('#c-turns .u-over', { position: { x: over.width - 1, y: 50 } });
    const hovered = await page.textContent('#c-turns .u-legend');
    expect(hovered).toContain(`${String(hourTokyo).padStart(2, '0')}:00`);
  }, 30000);

  it('numbers that add up: denials apart from blocks, confirmation outcomes, cost by purpose, failures', async () => {
    await page.goto(`${svc.url}/admin#overview`);
    await page.waitForSelector('#today .card');
    const cards = (await page.textContent('#today'))!;
    expect(cards).toContain('権限で断った会話 1 件');
    expect(cards).toContain('ルールで止めた会話 0 件');
    expect(cards).toMatch(/確認 4 件: 承認 2・取り消し 1・期限切れ 0・回答待ち 1/);
    expect(await page.textContent('#cost-breakdown')).toContain('会話');
    await page.click('#today a[href="#failed"]');
    await page.waitForSelector('section#failed.active');
  }, 30000);

  it('inspector: a button approval reads as an answer linked to its question; a wrong id says what to do', async () => {
    const approval = await svc.db.turnRecord.findFirstOrThrow({
      where: { roomId: 'c-morning', reasonCode: 'S_USER_APPROVED' },
    });
    await page.goto(`${svc.url}/admin#turn/${approval.id}`);
    await page.waitForSelector('#turn-steps .step');
    const text = (await page.textContent('#turn-steps'))!;
    expect(text).toContain('この回は確認への答えです');
    expect(text).toContain('内容: 企画書');
    expect(text).toMatch(/期限: 2030\/11\/28（木）/);
    expect(text).toContain('「承認」を選択（ボタンまたは「1」）');
    expect(text).not.toMatch(/null|undefined|—/);
    await page.click('#turn-steps a >> text=確認した回を開く');
    await page.waitForSelector('#turn-steps >> text=答えた回');
    await screenshot(page, 'admin-turn-question');
    // The constitution audit does not call a button approval 「思考過程が短い」.
    const audits = (await (
      await fetch(`${svc.url}/admin/api/audits/constitution?days=7`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
    ).json()) as { turns: { id: string }[] };
    expect(audits.turns.map((t) => t.id)).not.toContain(approval.id);

    await page.goto(`${svc.url}/admin#turn/no-such-turn`);
    const error = await page.waitForSelector('section#turn .error');
    expect(await error.textContent()).toBe(
      'このターンIDの記録はありません。監査ログで検索し、行をクリックして開いてください。',
    );
    expect(await page.locator('#turn-steps .step').count()).toBe(0);
  }, 30000);

  it('a member’s page, a room’s page, search by name and reason, CSV export with a BOM', async () => {
    await page.goto(`${svc.url}/admin#member/suzuki-kenji`);
    await page.waitForSelector('#member-view h2');
    const member = (await page.textContent('#member-view'))!;
    expect(member).toContain('鈴木健二さん');
    expect(member).toContain('備品の発注');
    // Who the person is in the directory: department, title, level and what it lets them see, linked chats, rooms.
    const facts = (await page.textContent('#member-view .facts'))!;
    expect(facts).toContain('経営 › 営業部');
    expect(facts).toContain('営業部長');
    expect(facts).toContain('4（部長・幹部）');
    expect(facts).toContain('見られる範囲: 自分の部署と配下のすべての部署');
    expect(facts).toContain('ChatWork・Discord・コンソール');
    expect(await page.locator('#member-view .facts a[href^="#room/"]').count()).toBe(4);
    await measure('member');
    await page.goto(`${svc.url}/admin#room/c-denied`);
    await page.waitForSelector('#room-view h2');
    expect(await page.textContent('#room-view')).toContain('権限で拒否');
    expect(await page.textContent('#room-view')).toContain('ディレクトリにないルームです');
    await measure('room');
    // The directory's lists: members with their department and level, rooms with their settings, the policies' rules.
    await page.goto(`${svc.url}/admin#members`);
    await page.waitForSelector('#members-rows tr');
    const row = (await page.textContent('#members-rows tr:has(a[href="#member/watanabe-sho"])'))!;
    expect(row).toContain('経営 › 営業部 › 東京営業課');
    expect(row).toContain('1（業務委託）');
    expect(row).toContain('ChatWork・コンソール');
    expect(await page.locator('#members-rows a[href^="#member/"]').count()).toBe(8);
    await page.click('#members-rows a >> text=伊藤結衣');
    await page.waitForSelector('#member-view .facts');
    expect(await page.textContent('#member-view .facts')).toContain('受け取らない（ディレクトリの設定）');
    expect(await page.textContent('#member-view .facts')).toContain('まだありません');
    await page.goto(`${svc.url}/admin#rooms`);
    await page.waitForSelector('#rooms-rows tr');
    const publicRoom = (await page.textContent('#rooms-rows tr:has-text("アクメ公開コミュニティ")'))!;
    expect(publicRoom).toContain('Discord');
    expect(publicRoom).toContain('公開（組織外の人も話せる・会話のみ）');
    expect(publicRoom).toContain('送らない');
    expect(await page.textContent('#rooms-rows tr:has-text("コンソール（管理者）")')).toContain('ここに送る');
    await page.click('#rooms-rows a >> text=コンソール（全体）');
    await page.waitForSelector('#room-view .facts');
    expect(await page.textContent('#room-view .facts')).toContain('社員のみ');
    await page.goto(`${svc.url}/admin#policies`);
    await page.waitForSelector('#policies-rows tr');
    const policies = (await page.textContent('#policies-rows'))!;
    // The sample's salary policy is text for the model only (issue 40: the Guardian protects data, not topics).
    expect(policies).toContain('給与情報は共有しない');
    expect(policies).toContain('複数の人への連絡は実行前に確認');
    expect(policies).toContain('なし（AIへの指示として伝えるだけで、自動では止めません）');

    await page.goto(`${svc.url}/admin#audit`);
    await page.fill('#audit-form input[name=person]', '渡辺');
    await page.selectOption('#audit-form select[name=reason]', 'Z_LEVEL_TOO_LOW');
    await page.click('#audit-form button[type=submit]');
    await page.waitForSelector('#audit-rows[data-query*="reason=Z_LEVEL_TOO_LOW"]', { state: 'attached' });
    expect(await page.locator('#audit-rows tr[data-id]').count()).toBe(1);
    const href = (await page.getAttribute('#audit-csv', 'href'))!;
    const csv = await page.evaluate(
      `fetch(${JSON.stringify(href)}).then((r) => r.arrayBuffer()).then((b) => Array.from(new Uint8Array(b)))`,
    );
    const bytes = Buffer.from(csv as number[]);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const lines = bytes.toString('utf8').slice(1).trim().split('\r\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('日時,種類,人,ルーム,判断,理由');
    expect(lines[1]).toContain('渡辺翔');
    expect(lines[1]).toContain('権限レベル不足');
  }, 30000);
});
