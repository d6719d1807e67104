import { loadActor, type Actor } from '../../src/authorization';
import type { InboundMessage } from '../../src/adapters/types';
import type { TurnContext } from '../../src/context/types';
import type { TurnDecision } from '../../src/pipeline/turn-decision';
import { proposes, says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/** Brain → Guardian → Gate → executor for given proposals, on real PostgreSQL with a scripted brain. */
describe('ProposalStage', () => {
  let t: TestDatabase;
  let p: TestPipeline;

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t, { STEP_BUDGET: '2' });
  });
  afterAll(() => t.close());

  async function turn(
    msg: InboundMessage,
  ): Promise<{ ctx: TurnContext; actor: Actor; decide: () => Promise<TurnDecision> }> {
    const actor = await loadActor(t.db, {
      orgId: 'acme',
      platform: msg.platform,
      roomId: msg.roomId,
      accountId: msg.senderAccountId,
      defaultLevel: 1,
    });
    const sender = {
      known: actor.known,
      memberId: actor.memberId,
      name: actor.name ?? '',
      level: actor.level,
      departmentId: actor.departmentId,
      departmentName: null,
      title: null,
      preferences: {},
    };
    const room = { platform: msg.platform, roomId: msg.roomId, name: null, authority: actor.roomAuthority };
    const ctx = await p.contextBuilder.build({ msg, sender, room, now: new Date() });
    const item = await p.take(msg);
    // The turn's work item is done when the stage has decided (the next turn of this conversation may run).
    const decide = () => p.proposals.think({ ctx, actor, item }).finally(() => p.queue.complete(item));
    return { ctx, actor, decide };
  }

  it('offers only the tools the sender may use', async () => {
    const watanabe = await loadActor(t.db, {
      orgId: 'acme',
      platform: 'console',
      roomId: 'console-general',
      accountId: 'watanabe-sho',
      defaultLevel: 1,
    });
    const names = p.proposals.toolsFor(watanabe).map((s) => s.name);
    expect(names).toContain('search_tasks');
    expect(names).not.toContain('create_task');
  });

  it('runs an allowed call once and returns its result to the brain, which then answers', async () => {
    p.brain.script(
      proposes([{ tool: 'lookup_person', params: { query: '佐藤' } }]),
      says('佐藤美咲さんは東京営業課ウル。ほかにも調べるウル？'),
    );
    const { decide } = await turn(consoleMessage('佐藤さんってどこの部署？'));

    const decision = await decide();

    expect(decision).toMatchObject({
      kind: 'executed',
      reasonCode: 'T_EXECUTED',
      guardian: { action: 'ALLOW' },
      auth: { result: 'ALLOWED' },
      reply: { text: '佐藤美咲さんは東京営業課ウル。ほかにも調べるウル？' },
    });
    expect(decision.proposals).toHaveLength(1);
    const second = p.brain.asked.at(-1)!;
    expect(second.purpose).toBe('step_2');
    const result = JSON.stringify(second.continuation);
    expect(result).toContain('"type":"tool_result"');
    expect(result).toContain('佐藤美咲');
    expect(result).not.toContain('"is_error":true');
  });

  it('a call the Gate denies goes back to the model as an error it must not retry; nothing runs', async () => {
    p.brain.script(
      proposes([{ tool: 'create_task', params: { assignee: '渡辺翔', title: '資料の準備' } }]),
      says('ごめんなさいウル、その操作はできないウル。管理者に相談してほしいウル。'),
    );
    const { decide } = await turn(
      consoleMessage('自分にタスクを作って', { senderAccountId: 'watanabe-sho', senderName: '渡辺翔' }),
    );

    const decision = await decide();

    expect(decision).toMatchObject({ kind: 'denied', reasonCode: 'Z_LEVEL_TOO_LOW', auth: { result: 'DENIED' } });
    const result = JSON.stringify(p.brain.asked.at(-1)!.continuation);
    expect(result).toContain('DENIED (Z_LEVEL_TOO_LOW)');
    expect(result).toContain('"is_error":true');
    expect(await t.db.task.count({ where: { title: '資料の準備' } })).toBe(0);
  });

  it('a call to confirm ends the turn with a question built from its checked parameters; nothing runs', async () => {
    p.brain.script(
      proposes([
        { tool: 'save_memory', params: { kind: 'person', subject: '渡辺翔', content: '朝は電話に出られない' } },
      ]),
    );
    const { decide } = await turn(consoleMessage('渡辺さんは朝は電話に出られないって覚えて'));

    const decision = await decide();

    expect(decision).toMatchObject({
      kind: 'confirm',
      reasonCode: 'Z_CONFIRM_PERSON',
      guardian: { action: 'ALLOW', reasonCode: 'G_OK' },
      auth: { result: 'CONFIRM' },
      ask: { by: 'gate', confirmationType: 'single' },
    });
    expect(decision.reply.text).toContain('渡辺翔');
    expect(decision.kind === 'confirm' && 'by' in decision.ask && decision.ask.pending?.key).toEqual({
      platform: 'console',
      roomId: 'console-general',
      accountId: 'tanaka-taro',
    });
    expect(await t.db.memory.count()).toBe(0);
  });

  it('stops at the step budget: a model that keeps calling tools gets an error reply', async () => {
    const again = () => proposes([{ tool: 'lookup_person', params: { query: '佐藤' } }]);
    p.brain.script(again(), again(), again());
    const { decide } = await turn(consoleMessage('佐藤さんを何度も調べて'));

    expect(await decide()).toMatchObject({
      kind: 'error',
      reasonCode: 'BUDGET_EXCEEDED',
      error: { category: 'SYSTEM' },
    });
    expect(p.brain.pending).toBe(0);
  });

  it('the brain failing after a call ran: the person hears it ran', async () => {
    p.brain.script(proposes([{ tool: 'lookup_person', params: { query: '佐藤' } }]), new Error('socket hang up'));
    const { decide } = await turn(consoleMessage('佐藤さんを調べて'));

    expect(await decide()).toMatchObject({ kind: 'executed', reasonCode: 'LLM_UNAVAILABLE', decider: 'SYSTEM' });
  });
});
