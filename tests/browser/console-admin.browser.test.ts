import type { Browser, Page } from 'playwright-core';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { startTestService, waitFor, type TestService } from '../helpers/service';
import { describeBrowser, launchBrowser, screenshot } from './browser';

const ADMIN_TOKEN = 'browser-admin-token-0123456789';

describeBrowser('the console and /admin in a real browser (headless Chromium)', () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  const llm = new FakeAnthropic();
  const errors: string[] = [];

  beforeAll(async () => {
    svc = await startTestService({ ADMIN_TOKEN });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, locale: 'ja-JP' });
    page.setDefaultTimeout(20000); // a turn on a loaded CI machine can take several seconds
    page.on('pageerror', (err) => {
      errors.push(err.message);
    });
  }, 60000);
  afterAll(async () => {
    llm.stop();
    await browser?.close();
    await svc?.close();
  });

  it('console: pick a member, talk, answer a confirmation with the button', async () => {
    await page.goto(`${svc.url}/console`);
    await page.waitForSelector('#member option[value="suzuki-kenji"]', { state: 'attached' });
    await page.selectOption('#member', 'suzuki-kenji');
    llm.script(replyCall('鈴木さん、おはようウル！今日もよろしくウル🐺'));
    await page.fill('#text', 'おはよう');
    await page.click('form#f button[type=submit]');
    await page.waitForSelector('.msg.assistant >> text=おはようウル');
    expect(await page.textContent('.msg.user .who')).toBe('鈴木健二');

    llm.script(toolCall('create_task', { assignee: '田中花子', title: 'ブラウザからの依頼' }, { overall: 0.6 }));
    await page.fill('#text', '田中花子さんにブラウザからの依頼をお願い');
    await page.click('form#f button[type=submit]');
    const approve = page.locator('.options button', { hasText: '承認' });
    await approve.waitFor();
    llm.script(replyCall('田中花子さんにお願いしたウル！🐺'));
    await approve.click();
    await page.waitForSelector('.msg.assistant >> text=お願いしたウル');
    expect(await svc.db.task.count({ where: { title: 'ブラウザからの依頼' } })).toBe(1);
    await screenshot(page, 'console');
  }, 60000);

  it('admin: login, a chart with data, search the audit log, open a turn in the inspector', async () => {
    await page.goto(`${svc.url}/admin`);
    await page.waitForSelector('input#token');
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await page.fill('#token', 'not-the-token-at-all');
    await page.click('button[type=submit]');
    await page.waitForSelector('.error >> text=トークンが正しくありません');
    await page.fill('#token', ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${svc.url}/admin`), page.click('button[type=submit]')]);
    expect((await page.context().cookies()).find((c) => c.name === 'hisho_admin')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });

    // Overview: uPlot draws the turns chart from the API's buckets.
    await page.waitForSelector('#c-turns canvas');
    await waitFor(async () => Number(await page.getAttribute('#c-turns', 'data-total')) >= 3, 5000, 'chart data');
    expect(await page.getAttribute('#c-turns', 'data-points')).toBe('24');
    expect(await page.textContent('#today')).toContain('今日の会話');
    await screenshot(page, 'admin-overview');
    await page.click('.range button[data-range="30d"]');
    await waitFor(async () => (await page.getAttribute('#c-turns', 'data-points')) === '30', 5000, '30-day chart');

    // Audit log: search by person and decision, then open the turn.
    await page.click('#nav a[href="#audit"]');
    await page.fill('#audit-form input[name=person]', '鈴木健二');
    await page.selectOption('#audit-form select[name=decision]', 'CONFIRM');
    await page.click('#audit-form button[type=submit]');
    // The tab's first, unfiltered load may still be on screen: wait for the rows of this search.
    await page.waitForSelector('#audit-rows[data-query*="decision=CONFIRM"]', { state: 'attached' });
    const row = page.locator('#audit-rows tr[data-id]');
    await row.first().waitFor();
    expect(await row.count()).toBe(1);
    expect(await row.first().textContent()).toContain('確信度が中程度');
    await screenshot(page, 'admin-audit');
    await row.first().click();
    await page.waitForSelector('#turn-steps .step >> text=4. ルールによる確認');
    const steps = await page.textContent('#turn-steps');
    for (const part of [
      '1. 依頼',
      '2. ボットの理解',
      '3. 提案された操作',
      '5. 権限の確認',
      '6. 実行したこと',
      '7. 返答',
      '時間と費用',
    ])
      expect(steps).toContain(part);
    expect(steps).toContain('確信度が中程度');
    expect(await page.locator('#turn-steps table tbody tr').count()).toBeGreaterThan(5);
    await screenshot(page, 'admin-turn');

    for (const tab of ['pending', 'schedules', 'constitution', 'alerts']) {
      await page.click(`#nav a[href="#${tab}"]`);
      await page.waitForSelector(`section#${tab}.active tbody tr`);
    }
    expect(await page.textContent('#sched-rows')).toContain('日次のまとめ');
  }, 60000);
});
