import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { buttonKey } from '../../src/state/button-key';
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

    llm.script(
      toolCall('create_task', { assignee: '田中花子', title: '企画書', due_date: '2030-11-28' }, { overall: 0.6 }),
    );
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

    llm.script(
      { status: 529, errorType: 'overloaded_error' },
      { status: 529, errorType: 'overloaded_error' },
      { status: 529, errorType: 'overloaded_error' },
      { status: 529, errorType: 'overloaded_error' },
    );
    await say('tanaka-taro', '今日の予定を教えて', 'c-outage');
    await waitTurns('c-outage', 1);

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
    for (const tab of ['overview', 'audit', 'pending', 'schedules', 'constitution', 'alerts', 'failed']) {
      await page.click(`#nav a[href="#${tab}"]`);
      await page.waitForSelector(`section#${tab}.active tbody tr, section#${tab}.active .card`);
      await page.waitForTimeout(300);
      await measure(tab);
    }
    const denied = await svc.db.turnRecord.findFirstOrThrow({ where: { roomId: 'c-denied' } });
    await page.goto(`${svc.url}/admin#turn/${denied.id}`);
    await page.waitForSelector('#turn-steps .step');
    await measure('turn-denied');
    const summary = Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v.count]));
    expect(summary).toEqual(Object.fromEntries(Object.keys(summary).map((k) => [k, 0])));
    expect(errors).toEqual([]);
  }, 60000);
});
