import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { startTestService, waitFor, type TestService } from '../helpers/service';
import { describeBrowser, launchBrowser, screenshot } from './browser';

const ADMIN_TOKEN = 'browser-admin-token-phone-0123456789';
const PHONE = { width: 390, height: 844 };
/** Every page of /admin an operator opens from the menu, or from a link (a member, a room, a turn). */
const MENU = [
  'overview',
  'audit',
  'turn',
  'pending',
  'schedules',
  'constitution',
  'alerts',
  'failed',
  'members',
  'rooms',
  'policies',
];
/** The one cost format of every page: dollars, thousands grouped, four decimals (or 「$0.0001未満」). */
const COST = /^\$\d{1,3}(,\d{3})*\.\d{4}$|^\$0\.0001未満$/;

/**
 * /admin on a phone: 390 px wide in Chromium whose locale is en-US (a company phone set to English), the
 * organisation in Asia/Tokyo. Nothing scrolls sideways, charts fit and follow the width, tables read as cards,
 * dates are written and typed as 2026/11/28, reasons come in groups, every cost has one format, and the
 * browser finds the favicon.
 */
describeBrowser('/admin on a phone, in an English-language browser (headless Chromium, 390 px)', () => {
  let svc: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const llm = new FakeAnthropic();
  const errors: string[] = [];
  const missing: string[] = [];

  const say = async (memberId: string, text: string, roomId: string) => {
    const res = await fetch(`${svc.url}/console/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: svc.url },
      body: JSON.stringify({ memberId, text, roomId }),
    });
    if (res.status >= 300) throw new Error(`console post ${res.status}: ${await res.text()}`);
  };
  const waitTurns = (roomId: string, n: number) =>
    waitFor(async () => (await svc.db.turnRecord.count({ where: { roomId } })) >= n, 20000, `${n} turns in ${roomId}`);

  /** Opens a page by its address and waits for its content. */
  async function open(hash: string, ready: string): Promise<void> {
    await page.goto(`${svc.url}/admin#${hash}`);
    await page.waitForSelector(ready, { state: 'attached' });
    await page.waitForTimeout(200);
  }

  beforeAll(async () => {
    svc = await startTestService({ ADMIN_TOKEN, BOT_TIMEZONE: 'Asia/Tokyo' });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: PHONE, locale: 'en-US', timezoneId: 'America/New_York' });
    page = await context.newPage();
    page.setDefaultTimeout(20000);
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('response', (res) => {
      if (res.status() === 404) missing.push(new URL(res.url()).pathname);
    });

    llm.script(replyCall('おはようウル！'));
    await say('suzuki-kenji', 'おはよう', 'c-phone');
    await waitTurns('c-phone', 1);
    llm.script(toolCall('create_task', { assignee: '田中花子', title: '備品の発注' }, { overall: 0.6 }));
    await say('suzuki-kenji', '田中花子さんに備品の発注をお願い', 'c-phone');
    await waitTurns('c-phone', 2);
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '議事録の清書' }),
      replyCall('ごめんなさいウル、いまの権限ではほかの方のタスクは登録できなかったウル🐺'),
    );
    await say('watanabe-sho', '田中さんに議事録の清書のタスクを作って', 'c-phone');
    await waitTurns('c-phone', 3);

    await page.goto(`${svc.url}/admin/login`);
    await page.fill('#token', ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${svc.url}/admin`), page.click('button[type=submit]')]);
  }, 90000);

  afterAll(async () => {
    llm.stop();
    await browser?.close();
    await svc?.close();
  });

  it('no page scrolls sideways at 390 px; tables read as cards; names stay on one line', async () => {
    const turn = await svc.db.turnRecord.findFirstOrThrow({
      where: { roomId: 'c-phone' },
      orderBy: { createdAt: 'asc' },
    });
    const pages: [string, string][] = [
      ...MENU.map((p): [string, string] => [p, `section#${p}.active`]),
      [`turn/${turn.id}`, '#turn-steps .step'],
      ['member/suzuki-kenji', '#member-view h2'],
      ['room/c-phone', '#room-view h2'],
    ];
    const wide: Record<string, number> = {};
    for (const [hash, ready] of pages) {
      await open(hash, ready);
      const m = (await page.evaluate(`(() => {
        const doc = document.documentElement;
        const style = (el) => getComputedStyle(el).overflowX;
        return { width: Math.max(doc.scrollWidth, document.body.scrollWidth), clip: style(doc) + style(document.body) };
      })()`)) as { width: number; clip: string };
      // Hiding the overflow would only hide the problem.
      expect(m.clip).toBe('visiblevisible');
      if (m.width > PHONE.width) wide[hash] = m.width;
      await screenshot(page, `admin-phone-${hash.replace('/', '-')}`);
    }
    expect(wide).toEqual({});

    // The audit table as cards: each cell takes the row's width and says what it is.
    await open('audit', '#audit-rows tr[data-id]');
    const cells = (await page.evaluate(`[...document.querySelectorAll('#audit-rows tr[data-id]:first-child td')]
      .map((td) => ({ w: td.getBoundingClientRect().width, label: td.dataset.label || '' }))`)) as {
      w: number;
      label: string;
    }[];
    expect(cells.length).toBe(10);
    for (const c of cells) expect(c.w).toBeGreaterThan(PHONE.width * 0.7);
    expect(cells.map((c) => c.label)).toEqual(expect.arrayContaining(['日時', '人', 'ルーム', '判断', '理由', '費用']));
    // A name is one line, not one character per line.
    const names = (await page.evaluate(
      `[...document.querySelectorAll('#audit-rows a[href^="#member/"]')]
        .map((a) => ({ text: a.textContent, lines: a.getClientRects().length }))`,
    )) as { text: string; lines: number }[];
    expect(names.length).toBeGreaterThan(0);
    for (const n of names) expect([n.text, n.lines]).toEqual([n.text, 1]);
    expect(errors).toEqual([]);
  }, 120000);

  it('the login page fits the phone (it was 404 px wide: the form was 340 px plus its padding)', async () => {
    const fresh = await browser.newContext({ viewport: PHONE, locale: 'en-US' });
    try {
      const login = await fresh.newPage();
      await login.goto(`${svc.url}/admin/login`);
      await login.waitForSelector('#token');
      const m = (await login.evaluate(`(() => {
        const form = document.querySelector('form').getBoundingClientRect();
        return { width: document.documentElement.scrollWidth, left: form.left, right: form.right };
      })()`)) as { width: number; left: number; right: number };
      expect(m.width).toBeLessThanOrEqual(PHONE.width);
      expect(m.left).toBeGreaterThanOrEqual(8);
      expect(m.right).toBeLessThanOrEqual(PHONE.width - 8);
      await screenshot(login, 'admin-phone-login');
    } finally {
      await fresh.close();
    }
  }, 30000);

  it('charts fit the phone and follow the window when it widens', async () => {
    await open('overview', '#c-turns canvas');
    const widths = () =>
      page.evaluate(
        `[...document.querySelectorAll('.chart .uplot')].map((u) => u.getBoundingClientRect().width)`,
      ) as Promise<number[]>;
    const narrow = await widths();
    expect(narrow.length).toBe(5);
    for (const w of narrow) expect(w).toBeLessThanOrEqual(PHONE.width - 16);
    // The page's CSP allows no eval: poll from here.
    await page.setViewportSize({ width: 1200, height: 900 });
    await waitFor(async () => (await widths()).every((w) => w > 450), 5000, 'charts as wide as a column');
    await page.setViewportSize(PHONE);
    await waitFor(
      async () => (await widths()).every((w) => w <= PHONE.width - 16),
      5000,
      'charts as narrow as a phone',
    );
  }, 30000);

  it('dates are written and typed as 2026/11/28 whatever the browser’s language', async () => {
    await open('audit', '#audit-rows tr[data-id]');
    const from = page.locator('#audit-form input[name=from]');
    // A text field that shows what it holds in the Japanese form (no mm/dd/yyyy of an en-US date input).
    expect(await from.getAttribute('type')).toBe('text');
    expect(await from.getAttribute('placeholder')).toMatch(/^\d{4}\/\d{2}\/\d{2}$/);
    const today = new Intl.DateTimeFormat('ja-JP', {
      timeZone: 'Asia/Tokyo',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).format(new Date());
    expect(today).toMatch(/^\d{4}\/\d{2}\/\d{2}$/);
    const search = async (fromText: string, toText: string) => {
      await from.fill(fromText);
      await page.fill('#audit-form input[name=to]', toText);
      await page.click('#audit-form button[type=submit]');
      const query = new URLSearchParams({ from: fromText, to: toText }).toString();
      await waitFor(
        () =>
          page.evaluate(
            `!!document.querySelector('section#audit .error') ||
              document.querySelector('#audit-rows').dataset.query === ${JSON.stringify(query)}`,
          ),
        10000,
        `a search from ${fromText} to ${toText}`,
      );
    };
    await search(today, today);
    expect(await page.locator('#audit-rows tr[data-id]').count()).toBe(3);
    // As people type it: full-width digits, 年月日; a day in 2030 holds nothing yet.
    const [y, mo, d] = today.split('/');
    const wide = (s: string) => s.replace(/[0-9]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
    await search(wide(`${y}/${mo}/${d}`), `${y}年${Number(mo)}月${Number(d)}日`);
    expect(await page.locator('#audit-rows tr[data-id]').count()).toBe(3);
    await search('2030/11/28', '2030/11/28');
    expect(await page.locator('#audit-rows tr[data-id]').count()).toBe(0);
    // An American date is not guessed at: the field says how to write it.
    await from.fill('11/28/2026');
    await page.click('#audit-form button[type=submit]');
    const error = await page.waitForSelector('section#audit .error');
    expect(await error.textContent()).toContain('2026/11/28');
    expect(await error.textContent()).toContain('開始日');
    // The table's times are Japanese too.
    await from.fill('');
    await page.fill('#audit-form input[name=to]', '');
    await page.click('#audit-form button[type=submit]');
    await page.waitForSelector('#audit-rows tr[data-id]');
    const first = (await page.textContent('#audit-rows tr[data-id] td'))!;
    expect(first).toMatch(/^\d{4}\/\d{1,2}\/\d{1,2} \d{2}:\d{2}$/);
  }, 60000);

  it('the reason filter comes in groups of what happened, in Japanese order', async () => {
    await open('audit', '#audit-form select[name=reason] optgroup');
    const groups = (await page.evaluate(`[...document.querySelectorAll('#audit-form select[name=reason] optgroup')]
      .map((g) => ({ label: g.label, options: [...g.querySelectorAll('option')].map((o) => o.textContent) }))`)) as {
      label: string;
      options: string[];
    }[];
    expect(groups.map((g) => g.label).slice(0, 4)).toEqual([
      'ブロックした',
      '権限で断った',
      '確認・質問した',
      '失敗した',
    ]);
    const collator = new Intl.Collator('ja');
    for (const g of groups) {
      expect(g.options.length).toBeGreaterThan(0);
      expect([g.label, g.options]).toEqual([g.label, [...g.options].sort(collator.compare)]);
      for (const o of g.options) expect(o).toMatch(/[ぁ-んァ-ヶ一-龠]/);
    }
    const all = groups.flatMap((g) => g.options);
    expect(groups.find((g) => g.label === 'ブロックした')!.options).toContain('秘密情報を検出');
    expect(groups.find((g) => g.label === '権限で断った')!.options).toContain('権限レベル不足');
    expect(all.length).toBeGreaterThan(60);
    // Choosing a group's reason still filters.
    await page.selectOption('#audit-form select[name=reason]', { label: '権限レベル不足' });
    await page.click('#audit-form button[type=submit]');
    await page.waitForSelector('#audit-rows[data-query*="reason=Z_LEVEL_TOO_LOW"]', { state: 'attached' });
    expect(await page.locator('#audit-rows tr[data-id]').count()).toBe(1);
  }, 30000);

  it('one cost format on every page that shows a cost', async () => {
    const turn = await svc.db.turnRecord.findFirstOrThrow({
      where: { roomId: 'c-phone' },
      orderBy: { createdAt: 'asc' },
    });
    const seen: string[] = [];
    for (const [hash, ready] of [
      ['overview', '#today .card'],
      ['audit', '#audit-rows tr[data-id]'],
      [`turn/${turn.id}`, '#turn-steps .step'],
      ['member/suzuki-kenji', '#member-view h2'],
      ['room/c-phone', '#room-view h2'],
    ]) {
      await open(hash!, ready!);
      const text = (await page.evaluate('document.body.innerText')) as string;
      seen.push(...[...text.matchAll(/\$[0-9][0-9,.]*(未満)?/g)].map((m) => m[0]));
    }
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.filter((c) => !COST.test(c))).toEqual([]);
  }, 60000);

  it('the favicon is found (no 404 on any page)', async () => {
    await open('overview', '#today .card');
    const icon = await page.getAttribute('link[rel=icon]', 'href');
    expect(icon).toBeTruthy();
    const res = await fetch(new URL(icon!, svc.url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\//);
    expect((await fetch(`${svc.url}/favicon.ico`)).status).toBe(200);
    await page.goto(`${svc.url}/console`);
    await page.waitForSelector('#member option[value="suzuki-kenji"]', { state: 'attached' });
    expect(missing).toEqual([]);
  }, 30000);
});
