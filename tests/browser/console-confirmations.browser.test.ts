import type { Browser, Page } from 'playwright-core';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { startTestService, type TestService } from '../helpers/service';
import { describeBrowser, launchBrowser, screenshot } from './browser';

/**
 * Issue 29 on the console, in headless Chromium: a confirmation answered by text disables the question's
 * buttons and says what happened; a click on a decided one (a page drawn before the decision) is told the
 * truth on that page only and nothing is posted in the room or run again.
 */
describeBrowser('console: buttons follow the confirmation (headless Chromium)', () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  const llm = new FakeAnthropic();
  const errors: string[] = [];

  beforeAll(async () => {
    svc = await startTestService();
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1000, height: 800 }, locale: 'ja-JP' });
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

  const roomMessages = () => svc.db.conversationMessage.count({ where: { platform: 'console' } });
  const tasks = () => svc.db.task.count({ where: { title: '週報のまとめ' } });

  it('「はい」 by text disables the buttons with a note; a click on the decided question stays private', async () => {
    await page.goto(`${svc.url}/console`);
    await page.waitForSelector('#member option[value="suzuki-kenji"]', { state: 'attached' });
    await page.selectOption('#member', 'suzuki-kenji');

    llm.script(toolCall('create_task', { assignee: '田中花子', title: '週報のまとめ' }, { overall: 0.6 }));
    await page.fill('#text', '田中花子さんに週報のまとめをお願い');
    await page.click('form#f button[type=submit]');
    const question = page.locator('.msg.assistant', { has: page.locator('.options button') });
    await question.waitFor();
    expect(await question.textContent()).toContain('週報のまとめ');
    const approve = question.locator('.options button', { hasText: '承認' });
    const cancel = question.locator('.options button', { hasText: 'キャンセル' });
    expect(await approve.isEnabled()).toBe(true);
    expect(await cancel.isEnabled()).toBe(true);

    // A second tab of the same person, drawn now and then cut off from the updates (its long poll fails):
    // it still shows the question open, as a page whose poll had not come back yet would.
    const stale = await browser.newPage({ viewport: { width: 1000, height: 800 }, locale: 'ja-JP' });
    let polls = 0;
    await stale.route('**/console/api/messages?**', (route) =>
      route.request().method() === 'GET' && ++polls > 1 ? route.abort() : route.continue(),
    );
    await stale.goto(`${svc.url}/console`);
    await stale.waitForSelector('#member option[value="suzuki-kenji"]', { state: 'attached' });
    const staleQuestion = stale.locator('.msg.assistant', { has: stale.locator('.options button') });
    await staleQuestion.waitFor();

    // Answered by text, not by the buttons.
    llm.script(replyCall('田中花子さんに週報のまとめをお願いしたウル！🐺'));
    await page.fill('#text', 'はい');
    await page.click('form#f button[type=submit]');
    await page.waitForSelector('.msg.assistant >> text=週報のまとめをお願いしたウル');
    await question.locator('.closed').waitFor();
    expect(await question.locator('.closed').textContent()).toBe('✅ 実行済みウル');
    expect(await approve.isDisabled()).toBe(true);
    expect(await cancel.isDisabled()).toBe(true);
    expect(await question.getAttribute('data-closed')).toBe('1');
    expect(await tasks()).toBe(1);
    await screenshot(page, 'console-confirmation-closed');

    // A click on the disabled button does nothing at all.
    const before = await roomMessages();
    const shown = await page.locator('.msg').count();
    await approve.click({ force: true });
    await new Promise((r) => setTimeout(r, 700));
    expect(await page.locator('.msg').count()).toBe(shown);
    expect(await roomMessages()).toBe(before);

    // The stale tab's 承認 is still on. A colleague at that tab clicks it: told on that page only that the
    // confirmation is not theirs.
    const staleApprove = staleQuestion.locator('.options button', { hasText: '承認' });
    expect(await staleApprove.isEnabled()).toBe(true);
    await stale.selectOption('#member', 'yamada-ichiro');
    await staleApprove.click();
    const notYours = stale.locator('.msg.private');
    await notYours.waitFor();
    expect(await notYours.textContent()).toMatch(/依頼した方だけ/);

    // The person who asked clicks it: told 「もう実行済み」 on that page only (the room and the history get
    // nothing, the first tab shows nothing new) and nothing runs again.
    await stale.selectOption('#member', 'suzuki-kenji');
    await staleApprove.click();
    const note = stale.locator('.msg.private').nth(1);
    await note.waitFor();
    expect(await note.locator('.who').textContent()).toBe('Hisho（あなたにだけ表示）');
    expect(await note.textContent()).toMatch(/もう実行済みウル: .*週報のまとめ/);
    await screenshot(stale, 'console-confirmation-late-click');
    await new Promise((r) => setTimeout(r, 700));
    expect(await page.locator('.msg').count()).toBe(shown);
    expect(await roomMessages()).toBe(before);
    expect(await tasks()).toBe(1);
    await stale.close();

    // A reload draws the question closed from the history.
    await page.reload();
    const again = page.locator('.msg.assistant', { has: page.locator('.options button') });
    await again.locator('.closed').waitFor();
    expect(await again.locator('.closed').textContent()).toBe('✅ 実行済みウル');
    expect(await again.locator('.options button:enabled').count()).toBe(0);
    expect(errors).toEqual([]);
  }, 90000);
});
