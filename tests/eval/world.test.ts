import { handlers } from '../../handlers';
import { parseCaseFile, type EvalCase } from '../../eval/cases';
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

  beforeAll(async () => {
    world = await openWorld({
      databaseUrl: process.env.HISHO_TEST_SERVER_URL!,
      slots: 1,
      registry: new ToolRegistry(handlers),
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
});
