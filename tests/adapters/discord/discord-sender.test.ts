import { AppError } from '../../../src/core/app-error';
import { DiscordSender, buildButtonRows, type DiscordSendPayload } from '../../../src/adapters/discord/discord-sender';
import type { OutboundReply } from '../../../src/core/chat';

/** Records every sendToChannel call; message ids are m1, m2, … */
function fakePort(failAt?: number) {
  const calls: { channelId: string; payload: DiscordSendPayload }[] = [];
  return {
    calls,
    async sendToChannel(channelId: string, payload: DiscordSendPayload) {
      calls.push({ channelId, payload });
      if (failAt === calls.length) throw Object.assign(new Error('Missing Permissions'), { code: 50013, status: 403 });
      return { id: `m${calls.length}` };
    },
  };
}

const base: OutboundReply = {
  platform: 'discord',
  roomId: '800000000000000000',
  text: '承知しました。',
  inReplyTo: { platformMessageId: '700000000000000001', accountId: '222222222222222222' },
};

const confirmOptions = [
  { answer: '1', label: '承認', key: 'h1:cf_abc-1', style: 'primary' as const },
  { answer: '2', label: 'キャンセル', key: 'h1:cf_abc-2', style: 'danger' as const },
];

describe('DiscordSender', () => {
  it('sends a short reply as one message replying to the asker, without pinging anyone else', async () => {
    const port = fakePort();
    const result = await new DiscordSender(port).send({ ...base, text: '@everyone <@&1> 了解です' });
    expect(result).toEqual({ platformMessageId: 'm1' });
    expect(port.calls).toEqual([
      {
        channelId: '800000000000000000',
        payload: {
          content: '@everyone <@&1> 了解です',
          replyToMessageId: '700000000000000001',
          allowedMentions: { parse: [], repliedUser: true },
        },
      },
    ]);
  });

  it('sends each chunk of an outbox message with its own enforced nonce, the same on a retry', async () => {
    const port = fakePort();
    const text = Array.from({ length: 30 }, (_, i) => `${i}: ${'あ'.repeat(95)}`).join('\n');
    await new DiscordSender(port).send({ ...base, text, idempotencyKey: 'reply:msg:discord:1:2' });
    await new DiscordSender(port).send({ ...base, text, idempotencyKey: 'reply:msg:discord:1:2' });
    const nonces = port.calls.map((c) => c.payload.nonce!);
    const half = nonces.length / 2;
    expect(half).toBeGreaterThanOrEqual(2);
    expect(nonces.slice(half)).toEqual(nonces.slice(0, half));
    expect(new Set(nonces.slice(0, half)).size).toBe(half);
    for (const n of nonces) expect(n.length).toBeLessThanOrEqual(25);
  });

  it('splits long text: reply reference on the first chunk only, buttons on the last only', async () => {
    const port = fakePort();
    const text = Array.from({ length: 50 }, (_, i) => `${i}: ${'あ'.repeat(95)}`).join('\n');
    const result = await new DiscordSender(port).send({ ...base, text, options: confirmOptions });
    expect(port.calls.length).toBeGreaterThanOrEqual(3);
    expect(result.platformMessageId).toBe(`m${port.calls.length}`);
    port.calls.forEach(({ payload }, i) => {
      expect(payload.content.length).toBeLessThanOrEqual(2000);
      expect(payload.allowedMentions).toEqual({ parse: [], repliedUser: true });
      expect(payload.replyToMessageId).toBe(i === 0 ? '700000000000000001' : undefined);
      expect(payload.components !== undefined).toBe(i === port.calls.length - 1);
    });
    const last = port.calls[port.calls.length - 1]!.payload;
    expect(last.content.endsWith('1. 承認 / 2. キャンセル')).toBe(true);
    expect(last.components).toEqual([
      {
        type: 1,
        components: [
          { type: 2, custom_id: 'h1:cf_abc-1', label: '承認', style: 1 },
          { type: 2, custom_id: 'h1:cf_abc-2', label: 'キャンセル', style: 4 },
        ],
      },
    ]);
  });

  it('writes numbered options in the text so a typed answer works', async () => {
    const port = fakePort();
    await new DiscordSender(port).send({ ...base, text: '削除してよろしいですか？', options: confirmOptions });
    expect(port.calls[0]!.payload.content).toBe('削除してよろしいですか？\n\n1. 承認 / 2. キャンセル');
  });

  it('skips buttons without a usable key but keeps their text answer', async () => {
    const port = fakePort();
    await new DiscordSender(port).send({
      ...base,
      options: [
        { answer: '1', label: 'はい' },
        { answer: '2', label: 'いいえ', key: 'not our format' },
      ],
    });
    expect(port.calls[0]!.payload.components).toBeUndefined();
    expect(port.calls[0]!.payload.content).toContain('1. はい / 2. いいえ');
  });

  it('truncates labels to 80 characters, maps styles, drops duplicate keys', () => {
    const rows = buildButtonRows([
      { answer: '1', label: 'x'.repeat(120), key: 'h1:a' },
      { answer: '2', label: 'dup', key: 'h1:a' },
      { answer: '3', label: 'ok', key: 'h1:b', style: 'secondary' },
    ]) as { components: { label: string; style: number; custom_id: string }[] }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.components.map((c) => [c.custom_id, c.label.length, c.style])).toEqual([
      ['h1:a', 80, 2],
      ['h1:b', 2, 2],
    ]);
  });

  it('puts more than five buttons on several rows', () => {
    const options = Array.from({ length: 7 }, (_, i) => ({ answer: String(i + 1), label: `o${i}`, key: `h1:k${i}` }));
    const rows = buildButtonRows(options) as { components: unknown[] }[];
    expect(rows.map((r) => r.components.length)).toEqual([5, 2]);
  });

  it('does not reply-reference a proactive notice, and adds the title in bold', async () => {
    const port = fakePort();
    await new DiscordSender(port).send({ ...base, kind: 'notice', title: '本日の予定', text: '10時 定例' });
    expect(port.calls[0]!.payload).toEqual({
      content: '**本日の予定**\n\n10時 定例',
      allowedMentions: { parse: [], repliedUser: true },
    });
  });

  it('sends nothing for an empty reply', async () => {
    const port = fakePort();
    expect(await new DiscordSender(port).send({ ...base, text: '  ' })).toEqual({});
    expect(port.calls).toHaveLength(0);
  });

  it('wraps Discord failures in AppError EXTERNAL_API_FAILED', async () => {
    const port = fakePort(1);
    await expect(new DiscordSender(port).send(base)).rejects.toMatchObject({
      name: 'AppError',
      code: 'EXTERNAL_API_FAILED',
    });
  });

  it('refuses replies for another platform', async () => {
    await expect(new DiscordSender(fakePort()).send({ ...base, platform: 'chatwork' })).rejects.toBeInstanceOf(
      AppError,
    );
  });
});

describe('DiscordSender: answers through an interaction (issue 44)', () => {
  const interaction = { applicationId: '111111111111111111', token: 'itoken-secret', private: true };

  function interactionPort() {
    const port = fakePort();
    const followUps: { interaction: unknown; payload: DiscordSendPayload & { flags: number } }[] = [];
    return {
      port: {
        ...port,
        async followUp(i: unknown, payload: DiscordSendPayload & { flags: number }) {
          followUps.push({ interaction: i, payload });
          return { id: `f${followUps.length}` };
        },
      },
      channelPosts: port.calls,
      followUps,
    };
  }

  it('a private answer goes as ephemeral follow-ups (flags 64), every chunk, never in the channel', async () => {
    const { port, channelPosts, followUps } = interactionPort();
    const text = `${'あ'.repeat(1990)}\n${'い'.repeat(100)}`;
    const result = await new DiscordSender(port).send({ ...base, text, interaction, idempotencyKey: 'k1' });
    expect(result).toEqual({ platformMessageId: 'f2' });
    expect(channelPosts).toEqual([]);
    expect(followUps.map((f) => [f.interaction, f.payload.flags])).toEqual([
      [interaction, 64],
      [interaction, 64],
    ]);
    // A follow-up is not a reply to a channel message and carries no channel nonce.
    expect(followUps.every((f) => f.payload.replyToMessageId === undefined && f.payload.nonce === undefined)).toBe(
      true,
    );
  });

  it('a public answer keeps flags 0; a question’s buttons and 「変更する」 go on its last chunk', async () => {
    const { port, followUps } = interactionPort();
    const options = [{ ...confirmOptions[0]!, edit: { key: 'hf:cf_abc_0', label: '変更する' } }, confirmOptions[1]!];
    await new DiscordSender(port).send({ ...base, options, interaction: { ...interaction, private: false } });
    expect(followUps).toHaveLength(1);
    expect(followUps[0]!.payload.flags).toBe(0);
    const rows = followUps[0]!.payload.components as { components: { custom_id: string; label: string }[] }[];
    expect(rows.flatMap((r) => r.components).map((b) => [b.label, b.custom_id])).toEqual([
      ['承認', 'h1:cf_abc-1'],
      ['キャンセル', 'h1:cf_abc-2'],
      ['変更する', 'hf:cf_abc_0'],
    ]);
  });

  it('without a way to answer interactions, a private answer fails rather than posting in the channel', async () => {
    const port = fakePort();
    await expect(new DiscordSender(port).send({ ...base, interaction })).rejects.toBeInstanceOf(AppError);
    expect(port.calls).toEqual([]);
  });

  it('an edit key that is not ours gets no button', () => {
    const rows = buildButtonRows([{ ...confirmOptions[0]!, edit: { key: 'evil:1', label: '変更する' } }]) as {
      components: unknown[];
    }[];
    expect(rows[0]!.components).toHaveLength(1);
  });
});
