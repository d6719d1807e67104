import { handlers } from '../../handlers';
import { loadPrompts } from '../../src/brain/prompts';
import { decidedAnswerText } from '../../src/confirmations/confirmation-text';
import type { PendingActionView } from '../../src/confirmations/types';
import { ToolExecutor } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import type { DescribeContext } from '../../src/tools/types';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { seedSample, toolContext } from '../handlers/tool-context';

/**
 * A late 「はい」 to a confirmation that already ran is told what ran, in the past tense (issue 40: it read
 * 「もう実行済みウル: 田中太郎さんにタスクを作成します。」, as if it were still to happen).
 */
describe('the answer to a confirmation that already ran', () => {
  let t: TestDatabase;
  const exec = new ToolExecutor(new ToolRegistry(handlers));

  beforeAll(async () => {
    t = await createTestDatabase();
    await seedSample(t.db);
  });
  afterAll(() => t.close());

  /** The action as the pending row keeps it: the effect the question was built from, run at 10:05. */
  async function ran(tool: string, params: Record<string, unknown>, lang: 'ja' | 'en', result: unknown) {
    const { idempotencyKey: _k, services, ...rest } = await toolContext(t.db, 'suzuki-kenji');
    const ctx: DescribeContext = { ...rest, services: { db: services.db }, lang };
    const d = await exec.describe(tool, params, ctx);
    if (d.status !== 'ok') throw new Error(JSON.stringify(d));
    const at = new Date('2026-11-20T01:05:00Z');
    return {
      status: 'executed',
      proposal: { id: 'p1', toolName: tool, parameters: params, summary: d.effect.summary, effect: d.effect },
      executedAt: at,
      decidedAt: at,
      result,
    } as unknown as PendingActionView;
  }

  it('says what it did, not what it will do, in Japanese and English', async () => {
    const prompts = loadPrompts('soul');
    const params = { assignee: '田中太郎', title: '議事録の作成' };
    const ja = decidedAnswerText(
      prompts,
      await ran('create_task', params, 'ja', { title: '議事録の作成' }),
      'executed',
      'ja',
    );
    expect(ja).toContain('もう実行済みウル: 田中太郎さんにタスクを作成しました（10:05に実行、『議事録の作成』）。');
    expect(ja).not.toContain('作成します');
    const en = decidedAnswerText(
      prompts,
      await ran('create_task', params, 'en', { title: '議事録の作成' }),
      'executed',
      'en',
    );
    expect(en).toContain('That is already done: Created a task for 田中太郎 (done at 10:05: "議事録の作成").');
    const reminder = await ran('create_reminder', { when: '2026-11-21', text: '請求書' }, 'ja', { text: '請求書' });
    // A reminder that was set has not been sent yet: it says it was set, not that it reminded.
    expect(decidedAnswerText(prompts, reminder, 'executed', 'ja')).toContain(
      'もう実行済みウル: このルームでのリマインドを登録しました（10:05に実行、『請求書』）。',
    );
  });
});
