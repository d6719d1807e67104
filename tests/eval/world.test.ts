import { handlers } from '../../handlers';
import { parseCaseFile, type EvalCase } from '../../eval/cases';
import { decide } from '../../eval/offline';
import { scoreCase } from '../../eval/score';
import { BOT_NAME, openWorld, type World } from '../../eval/world';
import { ToolRegistry } from '../../src/tools/registry';

/**
 * The eval's world must put the situation in front of the model as the service would: a case's history is the
 * conversation as it happened, oldest first, with the newest bot message kept (issue 40: rows written in one
 * statement came back newest first and the last bot line was dropped, in 13 cases such as ja-ref-003).
 */
function oneCase(yaml: string): EvalCase {
  const r = parseCaseFile(yaml, 'history.yaml');
  expect(r.problems).toEqual([]);
  return r.cases[0]!;
}

const unaddressed = (text: string) => text.replace(/^Hishoさん\n/, '');

describe('the eval world', () => {
  let world: World;
  const registry = new ToolRegistry(handlers);

  beforeAll(async () => {
    world = await openWorld({
      databaseUrl: process.env.HISHO_TEST_SERVER_URL!,
      slots: 1,
      registry,
      defaultUserLevel: 2,
      botNames: [BOT_NAME],
    });
  }, 60000);
  afterAll(() => world.close());

  it('gives the model the history in the order it happened, the newest bot message included', async () => {
    const c = oneCase(`
cases:
  - id: order
    history:
      - user: 明日の朝9時に請求書の件リマインドして
      - bot: 11月28日(土) 9:00 に「請求書の件」をリマインドするウル！
    message: あれ、ちゃんと入ってる？
    expect: { outcome: reply }
`);
    const p = await world.slots[0]!.prepare(c);
    // The person's earlier messages are stored as the service stores them: with the TO line's name.
    expect(p.ctx.history.map((h) => [h.role, unaddressed(h.text)])).toEqual([
      ['user', '明日の朝9時に請求書の件リマインドして'],
      ['assistant', '11月28日(土) 9:00 に「請求書の件」をリマインドするウル！'],
    ]);
    expect(p.ctx.history.map((h) => h.at)).toEqual([...p.ctx.history.map((h) => h.at)].sort());
  }, 30000);

  it('keeps the newest ten messages of a long history, oldest first', async () => {
    const lines = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? `  - user: 質問${i}` : `  - bot: 答え${i}ウル`));
    const c = oneCase(`
cases:
  - id: long
    history:
${lines.map((l) => `    ${l}`).join('\n')}
    message: 最後の質問
    expect: { outcome: reply }
`);
    const p = await world.slots[0]!.prepare(c);
    expect(p.ctx.history.map((h) => unaddressed(h.text))).toEqual([
      '質問2',
      '答え3ウル',
      '質問4',
      '答え5ウル',
      '質問6',
      '答え7ウル',
      '質問8',
      '答え9ウル',
      '質問10',
      '答え11ウル',
    ]);
  }, 30000);

  it('reads dates on the organisation’s business calendar, its year-end closing included (issue 40)', async () => {
    // Friday 12/25: the service's 「3営業日後」 skips 12/29–1/3 (年末年始休業) → 1/5, not the national 12/30.
    const c = oneCase(`
cases:
  - id: closing-days
    now: 2026-12-25T10:00:00+09:00
    message: 見積書の送付を田中太郎さんにお願い、3営業日後まで
    expect:
      outcome: tool
      tool: create_task
      params: { assignee: tanaka-taro, title: 見積書の送付, due: 2027-01-05 }
      verdict: { guardian: ALLOW, auth: ALLOWED }
`);
    const p = await world.slots[0]!.prepare(c);
    const proposal = {
      id: 'toolu_1',
      toolName: 'create_task',
      parameters: { assignee: '田中太郎', title: '見積書の送付', due: '3営業日後' },
    };
    const v = decide(p, registry, proposal, { overall: 0.9, intent: 0.9, parameters: 0.9 });
    expect(v.guardian.modifiedParameters).toMatchObject({ due: '2027-01-05' });
    // A date the scorer reads itself is read on the same calendar.
    const observed = {
      kind: 'tool' as const,
      proposals: [
        {
          tool: 'create_task',
          params: proposal.parameters,
          guardian: { action: 'ALLOW', reasonCode: 'G_OK' },
          auth: { result: 'ALLOWED', reasonCode: 'Z_OK' },
          persons: { assignee: [{ status: 'found' as const, memberId: 'tanaka-taro' }] },
        },
      ],
    };
    const facts = {
      meta: (t: string) => registry.meta(t),
      memberWords: (id: string) => [id],
      now: p.ctx.now,
      timezone: p.ctx.org.timezone,
      calendar: { closingDays: p.ctx.org.closingDays ?? [] },
    };
    expect(scoreCase(c, observed, facts)).toMatchObject({ pass: true, date: true });
  }, 30000);
});
