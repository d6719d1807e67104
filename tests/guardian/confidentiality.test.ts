import { checkReplyText, CONFIDENTIAL_TABLE, defaultGuardianConfig } from '../../src/guardian';
import { evaluate } from './fixtures';

/**
 * Issue 40: confidentiality protects data, not topics. The Guardian's table decides by what the call does (a work
 * item, or something that reads, stores or posts words) and whether it names anyone besides the sender; the
 * directory's `handles:` (senderHandles) names the departments whose work a topic is.
 */
describe('the confidentiality table', () => {
  const reminder = { name: 'create_reminder', effects: ['db.reminder_create'] };
  const memory = { name: 'query_memory', effects: [] };
  const post = { name: 'announce', effects: ['chatwork.post'] };
  const code = (tool: object, body: string, context: { namesOthers: boolean; senderHandles?: string[] }) =>
    evaluate({ tool, params: { body }, context }).reasonCode;

  it('is the table the issue asks for', () => {
    expect(CONFIDENTIAL_TABLE).toEqual({
      work_item: { self: 'allow', others: 'handlers' },
      disclosure: { self: 'handlers', others: 'block' },
    });
  });

  it.each([
    ['own reminder 「給与振込データの送信」', reminder, '給与振込データの送信', false, [], 'G_OK'],
    ['own reminder 「性能評価レポートのリマインド」', reminder, '性能評価レポートのリマインド', false, [], 'G_OK'],
    ['own reminder "send the payroll file"', reminder, 'send the payroll file', false, [], 'G_OK'],
    [
      'payroll work given to a colleague, not the payroll department',
      reminder,
      '給与振込の確認',
      true,
      [],
      'G_CONFIDENTIAL',
    ],
    ['payroll work given to a colleague by the payroll department', reminder, '給与振込の確認', true, ['pay'], 'G_OK'],
    [
      'evaluation work by a department that handles only pay',
      reminder,
      '人事評価の締切',
      true,
      ['pay'],
      'G_CONFIDENTIAL',
    ],
    ["asking for someone's pay", memory, '年収', true, [], 'G_CONFIDENTIAL'],
    ["asking for someone's pay, from the payroll department", memory, '年収', true, ['pay'], 'G_CONFIDENTIAL'],
    ['reading about the topic, not the payroll department', memory, '査定結果', false, [], 'G_CONFIDENTIAL'],
    ['reading about the topic, the department whose work it is', memory, '査定の手順', false, ['evaluation'], 'G_OK'],
    ['passing an evaluation to a colleague', post, '評価シートを共有します', true, ['evaluation'], 'G_CONFIDENTIAL'],
    ['M&A in an own reminder is still an own work item', reminder, 'M&A資料の整理', false, [], 'G_OK'],
    ['M&A work for others: no department handles it here', reminder, 'M&A資料の整理', true, ['pay'], 'G_CONFIDENTIAL'],
  ])('%s', (_, tool, body, namesOthers, senderHandles, expected) => {
    expect(code(tool, body, { namesOthers, senderHandles })).toBe(expected);
  });

  it('without the facts the rule is as strict as for a call about others (fail closed)', () => {
    expect(evaluate({ tool: reminder, params: { body: '給与振込データの送信' } }).reasonCode).toBe('G_CONFIDENTIAL');
  });
});

describe('the reply check and the work items the turn let through', () => {
  const config = defaultGuardianConfig();
  it('a reply may say back the title of an allowed work item, and nothing more on the topic', () => {
    const quoted = ['給与振込データの送信'];
    expect(checkReplyText('「給与振込データの送信」を12/24 10:00にリマインドするウル', config, quoted).action).toBe(
      'ALLOW',
    );
    expect(checkReplyText('「給与振込データの送信」を設定。ちなみに田中さんの給与は30万', config, quoted).action).toBe(
      'BLOCK',
    );
    expect(checkReplyText('「給与振込データの送信」を設定したウル', config).action).toBe('BLOCK');
  });
});
