import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/env';
import { silentLogger } from '../../src/observability/logger';
import { importDirectoryFile } from '../../src/org/import-directory';
import { SAMPLE_DIRECTORY, startService, type Service } from '../../src/service';
import { FakeAnthropic, FAKE_ANTHROPIC_URL, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { createTestDatabase } from '../helpers/db';
import { BOT_ACCOUNT, TEST_API_KEY, chatworkEnv, waitFor } from '../helpers/service';

/**
 * The organisation directory is cached per organisation in every instance (issue 10). An import in one
 * instance must reach the other's cache without a restart: the importer's NOTIFY, heard by each instance.
 */
describe('directory cache across two instances on one database', () => {
  let a: Service;
  let b: Service;
  let dir: string;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();

  beforeAll(async () => {
    const t = await createTestDatabase();
    await t.close();
    const env = loadConfig({
      NODE_ENV: 'test',
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATABASE_URL: t.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: FAKE_ANTHROPIC_URL,
      LLM_MAX_RETRIES: '0',
      LLM_DAILY_COST_LIMIT_USD: '0',
      SELF_CRITIQUE_RATE: '0',
      WORKER_CONCURRENCY: '2',
      SENDER_TURNS_PER_MINUTE: '1000',
      ...chatworkEnv(),
    });
    const o = { logger: silentLogger(), workerPollMs: 30, chatworkBotAccountId: BOT_ACCOUNT };
    a = await startService(env, { ...o, instanceId: 'a' });
    b = await startService(env, { ...o, instanceId: 'b' });
    // Only b takes turns, so what b's cache holds decides.
    await a.pool.stop(1000);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hisho-dir-'));
  });
  afterAll(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await fs.rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    cw.install();
  });
  afterEach(() => {
    llm.stop();
  });

  let asked = 0;
  async function askForTask(assignee: string): Promise<string> {
    const marker = `（依頼${++asked}）`;
    const before = cw.posts.length;
    llm.script(
      toolCall('create_task', { assignee, title: '歓迎会の準備', due: '明日' }),
      replyCall('結果を伝えるウル。ほかにもあれば言ってほしいウル。'),
    );
    const d = mentionDelivery({
      from: 1003,
      room: 5001,
      body: `[To:9999]${assignee}さんに歓迎会の準備をお願い${marker}`,
    });
    expect((await postWebhook(`http://127.0.0.1:${b.port}`, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length > before, 8000, 'reply');
    const turn = await waitFor(
      () => b.db.turnRecord.findFirst({ where: { inputRedacted: { contains: marker } } }),
      5000,
      'turn record',
    );
    return turn.decision;
  }

  /** The first model request of the last task request: its context names the persons b's directory cache knows. */
  const lastContext = () =>
    JSON.stringify(llm.requests.filter((r) => JSON.stringify(r).includes(`（依頼${asked}）`))[0] ?? null);

  it('a member added by an import in instance a is known to instance b at once', async () => {
    // b fills its cache: the new member does not exist yet, so no task is created for them.
    expect(await askForTask('山田新')).not.toBe('EXECUTED');
    expect(await b.db.task.count({ where: { assigneeMemberId: 'yamada-arata' } })).toBe(0);
    expect(lastContext()).toContain('山田新さんに歓迎会の準備をお願い');
    expect(lastContext()).not.toContain('yamada-arata');

    const sample = await fs.readFile(SAMPLE_DIRECTORY, 'utf8');
    const added = sample.replace(
      /\nmembers:\n/,
      `\nmembers:\n  - id: yamada-arata\n    name: 山田新\n    level: 2\n    department: sales\n` +
        `    accounts: { chatwork: 1077 }\n\n`,
    );
    expect(added).not.toBe(sample);
    const file = path.join(dir, 'org.yaml');
    await fs.writeFile(file, added);
    await importDirectoryFile(a.db, file);

    // No restart of b: the task is created for the new member through b's gate and handler.
    await waitFor(async () => (await askForTask('山田新')) === 'EXECUTED', 10000, 'b sees the imported member');
    expect(await b.db.task.count({ where: { assigneeMemberId: 'yamada-arata' } })).toBe(1);
    // The persons in the model's context come from the same cache: the new member is named there too.
    expect(lastContext()).toContain('山田新（id: yamada-arata、');
  });

  it("the organisation's values and policies an import in instance a changed reach b's next prompt", async () => {
    expect(await askForTask('佐藤花子')).toBeDefined();
    expect(lastContext()).toContain('お客様の成功を第一に。');
    const sample = await fs.readFile(SAMPLE_DIRECTORY, 'utf8');
    const changed = sample
      .replace('お客様の成功を第一に。', '安全第一、品質第二。')
      .replace(
        /\npolicies:\n/,
        `\npolicies:\n  - id: quiet-fridays\n    title: 金曜は会議なし\n    content: 金曜日には会議を入れない。\n    priority: 50\n`,
      );
    expect(changed).not.toBe(sample);
    const file = path.join(dir, 'org-values.yaml');
    await fs.writeFile(file, changed);
    await importDirectoryFile(a.db, file);

    // b, not restarted and well within any cache's age bound, puts the imported values and policy in the prompt.
    await waitFor(
      async () => {
        await askForTask('佐藤花子');
        return lastContext().includes('安全第一、品質第二。');
      },
      5000,
      'b sees the imported values',
    );
    expect(lastContext()).toContain('金曜日には会議を入れない。');
    expect(lastContext()).not.toContain('お客様の成功を第一に。');
  });

  it('a room added by an import in instance a is a member room for instance b at once', async () => {
    const inRoom6060 = async (marker: string) => {
      llm.script(replyCall('了解ウル。ほかにもあれば言ってほしいウル。'));
      const d = mentionDelivery({ from: 1003, room: 6060, body: `[To:9999]Hishoさん\n確認です${marker}` });
      expect((await postWebhook(`http://127.0.0.1:${b.port}`, d.raw, d.signature)).status).toBe(200);
      const item = await waitFor(
        () =>
          b.db.workItem.findFirst({
            where: { type: 'user_request', payload: { path: ['text'], string_contains: marker } },
          }),
        5000,
        'work item',
      );
      // The turn answers (its scripted reply is used up) before the next message is sent.
      await waitFor(
        async () => (await b.db.workItem.findUnique({ where: { id: item.id } }))?.state === 'done',
        5000,
        'turn',
      );
      return item.payload as { orgId: string; roomAuthority?: string };
    };
    // Not in the directory yet: a guest room, public (R-A5).
    expect(await inRoom6060('（前）')).toMatchObject({ orgId: 'acme', roomAuthority: 'public' });

    const sample = await fs.readFile(SAMPLE_DIRECTORY, 'utf8');
    const added = sample.replace(
      /\nrooms:\n/,
      `\nrooms:\n  - { platform: chatwork, id: "6060", name: 新プロジェクト, authority: member }\n`,
    );
    expect(added).not.toBe(sample);
    const file = path.join(dir, 'org-rooms.yaml');
    await fs.writeFile(file, added);
    await importDirectoryFile(a.db, file);

    // b, not restarted, hears the import: the room is the organisation's member room.
    await waitFor(
      async () => !('roomAuthority' in (await inRoom6060(`（後${Date.now()}）`))),
      10000,
      'b sees the room',
    );
  });
});
