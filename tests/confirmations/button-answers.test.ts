import { Client } from 'discord.js';
import { DiscordGateway } from '../../src/adapters/discord/discord-gateway';
import type { InboundMessage } from '../../src/core/chat';
import { silentLogger } from '../../src/observability/logger';
import { createButtonAnswers } from '../../src/confirmations/button-answers';
import { confirmationOptions } from '../../src/confirmations/confirmation-text';
import { loadPrompts } from '../../src/brain/prompts';
import { Sessions } from '../../src/confirmations/sessions';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

const CHANNEL = '800000000000000000';
const ASKER = '222222222222222222';
const OTHER = '333333333333333333';

describe('confirmation buttons on Discord → the confirmation flow (real state, no network)', () => {
  let t: TestDatabase;
  let clock = new Date('2026-11-22T01:00:00Z');
  let states: Sessions;
  let accepted: InboundMessage[];
  let gateway: DiscordGateway;
  const prompts = loadPrompts('soul');

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    clock = new Date('2026-11-22T01:00:00Z');
    states = new Sessions(t.db, { now: () => clock });
    accepted = [];
    const client = new Client({ intents: [] });
    (client as unknown as { user: unknown }).user = { id: '111111111111111111' };
    const onButton = createButtonAnswers({
      pending: states.pending,
      intake: {
        accept: async (m) => {
          accepted.push(m);
          return { status: 'accepted' };
        },
      },
      prompts,
      logger: silentLogger(),
      now: () => clock,
    });
    gateway = new DiscordGateway({
      token: 'unused',
      client,
      logger: silentLogger(),
      intake: { accept: async () => ({ status: 'accepted' }) },
      resolveRoom: async () => ({ orgId: 'acme', authority: 'member' }),
      defaultOrgId: () => 'acme',
      onButton: (c) =>
        onButton({
          platform: 'discord',
          roomId: c.roomId,
          accountId: c.accountId,
          key: c.key,
          clickId: c.interactionId,
        }),
    });
  });
  afterEach(async () => {
    await gateway.stop();
  });

  function click(customId: string, userId: string) {
    const calls: string[] = [];
    const notes: unknown[] = [];
    const rec = (name: string) => async (arg?: unknown) => {
      calls.push(name);
      if (arg) notes.push(arg);
    };
    const interaction = {
      id: `9${Math.floor(Math.random() * 1e15)}`,
      customId,
      channelId: CHANNEL,
      user: { id: userId },
      isButton: () => true,
      deferUpdate: rec('deferUpdate'),
      reply: rec('reply'),
      followUp: rec('followUp'),
      editReply: rec('editReply'),
    };
    return { interaction, calls, notes };
  }

  async function pending() {
    return states.pending.open(
      { platform: 'discord', roomId: CHANNEL, accountId: ASKER },
      {
        orgId: 'acme',
        memberId: null,
        proposal: { id: 'toolu_1', toolName: 'create_task', parameters: { title: 'x' } },
        question: 'q',
        confirmationType: 'single',
        originalMessage: 'm',
        reasoning: 'reasoning long enough here',
        confidence: 0.6,
        reasonCode: 'G_CONFIDENCE_MEDIUM',
      },
    );
  }

  it("the asker's 承認 click is acknowledged at once and becomes the answer 「1」 for that pending action", async () => {
    const p = await pending();
    const yes = confirmationOptions(prompts, 'ja', p.id)[0]!;
    const c = click(yes.key!, ASKER);
    await gateway.handleButton(c.interaction as never);
    expect(c.calls[0]).toBe('deferUpdate');
    expect(accepted).toHaveLength(1);
    expect(accepted[0]).toMatchObject({
      platform: 'discord',
      roomId: CHANNEL,
      senderAccountId: ASKER,
      text: '1',
      answerTo: p.id,
    });
  });

  it("someone else's click gets an ephemeral note and answers nothing", async () => {
    const p = await pending();
    const c = click(confirmationOptions(prompts, 'ja', p.id)[0]!.key!, OTHER);
    await gateway.handleButton(c.interaction as never);
    expect(accepted).toHaveLength(0);
    expect(c.calls).toContain('followUp');
    expect(JSON.stringify(c.notes)).toContain('依頼した方だけ');
  });

  it('an expired or forged button answers nothing', async () => {
    const p = await pending();
    clock = new Date(clock.getTime() + 11 * 60_000);
    const late = click(confirmationOptions(prompts, 'ja', p.id)[1]!.key!, ASKER);
    await gateway.handleButton(late.interaction as never);
    expect(JSON.stringify(late.notes)).toContain('確認の期限が切れていた');
    const forged = click('h1:ffffffffffffffffffffffffffffffff_a', ASKER);
    await gateway.handleButton(forged.interaction as never);
    const garbage = click('approve-everything', ASKER);
    await gateway.handleButton(garbage.interaction as never);
    expect(garbage.calls).toEqual(['reply']);
    expect(accepted).toHaveLength(0);
  });
});
