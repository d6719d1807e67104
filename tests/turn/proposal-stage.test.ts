import { loadActor, type Actor } from '../../src/authorization';
import { loadPrompts } from '../../src/brain/prompts';
import { buildRequest } from '../../src/brain/request';
import type { InboundMessage } from '../../src/core/chat';
import type { TurnContext } from '../../src/context/types';
import type { TurnDecision } from '../../src/turn/turn-decision';
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

  const actorOf = (accountId: string) =>
    loadActor(t.db, { orgId: 'acme', platform: 'console', roomId: 'console-general', accountId, defaultLevel: 1 });

  it('offers each member the tools his level allows; what one may not use is named in the context', async () => {
    const watanabe = await actorOf('watanabe-sho'); // level 1
    const yamada = await actorOf('yamada-ichiro'); // level 6
    const low = p.proposals.toolsFor(watanabe).map((s) => s.name);
    const high = p.proposals.toolsFor(yamada).map((s) => s.name);
    expect(high).toEqual(expect.arrayContaining(['create_task', 'team_overview', 'announce', 'search_tasks']));
    expect(low).toContain('search_tasks');
    for (const above of ['create_task', 'team_overview', 'announce']) expect(low).not.toContain(above);
    expect(p.proposals.restrictedFor(watanabe)).toEqual(
      expect.arrayContaining(['create_task', 'team_overview', 'announce']),
    );
    expect(p.proposals.restrictedFor(watanabe)).not.toContain('search_tasks');
    expect(p.proposals.restrictedFor(yamada)).toEqual([]);
  });

  it('the cached prefix (loaded tools + system) is the same for levels 1 and 6; the rest is deferred', async () => {
    const request = async (accountId: string, name: string) => {
      const actor = await actorOf(accountId);
      const msg = consoleMessage('こんにちは', { senderAccountId: accountId, senderName: name });
      const ctx = await p.contextBuilder.build({
        msg,
        sender: {
          known: true,
          memberId: actor.memberId,
          name,
          level: actor.level,
          departmentId: actor.departmentId,
          departmentName: null,
          title: null,
          preferences: {},
        },
        room: { platform: 'console', roomId: 'console-general', name: null, authority: actor.roomAuthority },
        now: new Date(),
      });
      return buildRequest({
        prompts: loadPrompts('soul'),
        ctx,
        tools: p.proposals.toolsFor(actor),
        restricted: p.proposals.restrictedFor(actor),
        model: 'm',
        maxTokens: 1,
      });
    };
    const low = await request('watanabe-sho', '渡辺翔');
    const high = await request('yamada-ichiro', '山田一郎');
    const loaded = (r: typeof low) => r.tools.filter((t) => !t.deferred);
    const deferred = (r: typeof low) => r.tools.filter((t) => t.deferred).map((t) => t.name);
    expect(JSON.stringify(loaded(low))).toBe(JSON.stringify(loaded(high)));
    expect(low.system).toEqual(high.system);
    expect(loaded(low).map((t) => t.name)).toEqual([
      'create_reminder',
      'create_schedule',
      'lookup_person',
      'save_memory',
      'find_tools',
      'reply',
      'ask_clarification',
    ]);
    // Issue 39: the loaded tools were 35 definitions of ≈ 1.4 KB each (48 KB); now 7 and compact.
    expect(Buffer.byteLength(JSON.stringify(loaded(low)), 'utf8')).toBeLessThanOrEqual(6500);
    // What a sender may not use is neither loaded nor deferred: no search can find it.
    expect(deferred(low)).not.toContain('team_overview');
    expect(deferred(low)).not.toContain('create_task');
    expect(deferred(high)).toEqual(expect.arrayContaining(['team_overview', 'create_task', 'announce']));
    // The same array, built once per set of tools and reused: no turn rebuilds the definitions.
    expect((await request('yamada-ichiro', '山田一郎')).tools).toBe(high.tools);
    // The difference is in the volatile context (the user turn), not in the prefix.
    expect(JSON.stringify(low.messages)).toMatch(/この人の権限レベル: 1（この人には使えない機能: [^）]*team_overview/);
    expect(JSON.stringify(high.messages)).not.toContain('この人の権限レベル');
  });

  it('a level-1 sender whose model proposes a managers-only tool (team_overview) is refused by the Gate', async () => {
    p.brain.script(
      proposes([{ tool: 'team_overview', params: {} }]),
      says('ごめんなさいウル、チームの状況は管理職の人に聞いてほしいウル。自分のタスクなら調べられるウル。'),
    );
    const { decide } = await turn(
      consoleMessage('チームの状況を教えて', { senderAccountId: 'watanabe-sho', senderName: '渡辺翔' }),
    );

    const decision = await decide();

    // It was never offered (nor findable), yet a model that names it anyway is stopped by the Gate.
    expect(p.brain.asked.at(-2)!.tools.map((s) => s.name)).not.toContain('team_overview');
    expect(decision).toMatchObject({ kind: 'denied', reasonCode: 'Z_LEVEL_TOO_LOW', auth: { result: 'DENIED' } });
    const result = JSON.stringify(p.brain.asked.at(-1)!.continuation);
    expect(result).toContain('DENIED (Z_LEVEL_TOO_LOW)');
    expect(result).toContain('"isError":true');
    expect(result).not.toContain('overdueTasks');
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
    expect(result).not.toContain('"isError":true');
  });

  it('every step of a tool loop is asked of the model of the first decision (no re-routing mid-turn)', async () => {
    p.brain.script(
      proposes([{ tool: 'lookup_person', params: { query: '佐藤' } }]),
      proposes([{ tool: 'lookup_person', params: { query: '田中' } }]),
      says('佐藤さんは東京、田中さんは大阪ウル。'),
    );
    const { decide } = await turn(consoleMessage('佐藤さんと田中さんの部署は？'));

    await decide();

    const asked = p.brain.asked.slice(-3);
    expect(asked.map((a) => a.purpose)).toEqual([undefined, 'step_2', 'step_3']);
    // The first decision chose its model (routing rule, cost limit); the steps keep it, whatever the limit says now.
    expect(asked[0]!.route).toBeUndefined();
    expect(asked[1]!.route).toEqual({ model: 'fake-model', cacheTtl: '5m' });
    expect(asked[2]!.route).toEqual({ model: 'fake-model', cacheTtl: '5m' });
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
    expect(result).toContain('"isError":true');
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
