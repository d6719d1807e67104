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

  it('offers every member the same tools in the same order; what one may not use is in the context', async () => {
    const watanabe = await actorOf('watanabe-sho'); // level 1
    const yamada = await actorOf('yamada-ichiro'); // level 6
    const names = p.proposals.toolsFor(watanabe).map((s) => s.name);
    expect(names).toEqual(p.proposals.toolsFor(yamada).map((s) => s.name));
    expect(names).toEqual(expect.arrayContaining(['create_task', 'team_overview', 'announce', 'search_tasks']));
    expect(p.proposals.restrictedFor(watanabe)).toEqual(
      expect.arrayContaining(['create_task', 'team_overview', 'announce']),
    );
    expect(p.proposals.restrictedFor(watanabe)).not.toContain('search_tasks');
    expect(p.proposals.restrictedFor(yamada)).toEqual([]);
  });

  it('the cacheable prefix (tools + system) is byte-identical for levels 1 and 6; tools ≤ 15 KB', async () => {
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
    const toolJson = JSON.stringify(low.tools);
    expect(low.tools.length).toBeGreaterThanOrEqual(20); // 18 capabilities + reply + ask_clarification
    expect(toolJson).toBe(JSON.stringify(high.tools));
    expect(low.system).toEqual(high.system);
    // Issue 10's budget was 15 KB for its 18 capabilities + reply + ask_clarification (≤ 750 bytes a tool), with the
    // envelope described once in the system prompt. Issue 33 puts the envelope in every capability's schema (a
    // model without it returned a bare number for confidence, a string for reasoning): ≈ 560 bytes more a tool,
    // all of it in the cached prefix. The budget is now that, measured: 26 KB for those 20, ≤ 1,320 bytes a tool.
    // Tools added after issue 10 (knowledge, background work, task changes, schedules) are outside those 20.
    const LATER = new Set([
      'search_knowledge',
      'start_work',
      'work_status',
      'cancel_work',
      'save_artifact',
      'change_task',
      'cancel_task',
      'create_schedule',
      'create_room_schedule',
      'list_schedules',
      'pause_schedule',
      'resume_schedule',
      'change_schedule',
      'cancel_schedule',
      'snooze_reminder',
    ]);
    const first20 = JSON.stringify(low.tools.filter((t) => !LATER.has(t.name)));
    expect(low.tools.length - LATER.size).toBe(20);
    expect(Buffer.byteLength(first20, 'utf8')).toBeLessThanOrEqual(26000);
    // change_task (1.7 KB: three kinds of change) raised the mean to 1,324 bytes. Issue 31's eight schedule tools
    // (three carry the recurrence rule, ~2.5–3 KB each after flattening it) raise it to 1,393; 1,400 keeps it tight.
    expect(Buffer.byteLength(toolJson, 'utf8') / low.tools.length).toBeLessThanOrEqual(1400);
    // The same array, built once and reused: no turn rebuilds the definitions.
    expect(low.tools).toBe(high.tools);
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

    expect(p.brain.asked.at(-2)!.tools.map((s) => s.name)).toContain('team_overview');
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
