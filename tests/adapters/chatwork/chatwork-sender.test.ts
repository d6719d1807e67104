import nock from 'nock';
import type { OutboundReply } from '../../../src/core/chat';
import { ChatworkClient } from '../../../src/adapters/chatwork/chatwork-client';
import {
  CHATWORK_MAX_BODY_LENGTH,
  ChatworkSender,
  formatChatworkBody,
} from '../../../src/adapters/chatwork/chatwork-sender';
import { AppError } from '../../../src/core/app-error';
import { silentLogger } from '../../../src/observability/logger';

const ORIGIN = 'https://api.chatwork.test';

function sender(): ChatworkSender {
  const client = new ChatworkClient({
    apiToken: 't0ken',
    baseUrl: `${ORIGIN}/v2`,
    logger: silentLogger(),
    maxRetries: 0,
  });
  return new ChatworkSender({ client, logger: silentLogger() });
}

/** Expects exactly one post to room 42 with this body; answers with message id 555. */
function expectPost(body: string): nock.Scope {
  return nock(ORIGIN).post('/v2/rooms/42/messages', { body }).reply(200, { message_id: '555' });
}

const base: OutboundReply = { platform: 'chatwork', roomId: '42', text: '了解しました' };
const asker = { platformMessageId: '1556', accountId: '123', accountName: '田中' };

describe('ChatworkSender', () => {
  it('has platform chatwork', () => {
    expect(sender().platform).toBe('chatwork');
  });

  it('prefixes a reply with the reply tag and the asker name', async () => {
    const scope = expectPost('[rp aid=123 to=42-1556]田中さん\n了解しました');
    await expect(sender().send({ ...base, kind: 'reply', inReplyTo: asker })).resolves.toEqual({
      platformMessageId: '555',
    });
    expect(scope.isDone()).toBe(true);
  });

  it('treats a reply without kind as a reply, and omits the name when unknown', async () => {
    const scope = expectPost('[rp aid=123 to=42-1556]\n了解しました');
    await sender().send({ ...base, inReplyTo: { platformMessageId: '1556', accountId: '123' } });
    expect(scope.isDone()).toBe(true);
  });

  it('posts a notice without a reply tag', async () => {
    const scope = expectPost('明日が期限です');
    await sender().send({ ...base, kind: 'notice', text: '明日が期限です', inReplyTo: asker });
    expect(scope.isDone()).toBe(true);
  });

  it('wraps a title and options in an info box', async () => {
    const scope = expectPost(
      '[rp aid=123 to=42-1556]田中さん\n[info][title]確認[/title]タスクを作成しますか？\n\n1. はい\n2. いいえ[/info]',
    );
    await sender().send({
      ...base,
      kind: 'reply',
      inReplyTo: asker,
      title: '確認',
      text: 'タスクを作成しますか？',
      options: [
        { answer: '1', label: 'はい' },
        { answer: '2', label: 'いいえ' },
      ],
    });
    expect(scope.isDone()).toBe(true);
  });

  it('neutralises tags in the text, title, options and name', async () => {
    const scope = expectPost(
      '[rp aid=123 to=42-1556]［toall]さん\n[info][title]［To:1]t[/title]［toall] hi ［/info]\n\n1. ［hr]x[/info]',
    );
    await sender().send({
      ...base,
      inReplyTo: { ...asker, accountName: '[toall]' },
      title: '[To:1]t',
      text: '[toall] hi [/info]',
      options: [{ answer: '1', label: '[hr]x' }],
    });
    expect(scope.isDone()).toBe(true);
  });

  it('drops a reply tag whose ids are malformed instead of injecting them', async () => {
    const scope = expectPost('了解しました');
    await sender().send({ ...base, inReplyTo: { ...asker, platformMessageId: '1][toall' } });
    expect(scope.isDone()).toBe(true);
  });

  it('refuses a reply for another platform', async () => {
    await expect(sender().send({ ...base, platform: 'discord' })).rejects.toBeInstanceOf(AppError);
  });
});

describe('formatChatworkBody', () => {
  it('truncates the text with an ellipsis and keeps the closing tags', () => {
    const { body } = formatChatworkBody({ ...base, title: 'T', text: 'あ'.repeat(70_000) });
    expect(body).toHaveLength(CHATWORK_MAX_BODY_LENGTH);
    expect(body.endsWith('あ…[/info]')).toBe(true);
    expect(body.startsWith('[info][title]T[/title]')).toBe(true);
  });

  it('does not split a surrogate pair when truncating', () => {
    const { body } = formatChatworkBody({ ...base, text: 'a' + '😀'.repeat(40_000) });
    expect(body.length).toBeLessThanOrEqual(CHATWORK_MAX_BODY_LENGTH);
    expect(body.endsWith('😀…')).toBe(true);
  });

  it('leaves bodies within the limit unchanged', () => {
    const text = 'x'.repeat(CHATWORK_MAX_BODY_LENGTH);
    expect(formatChatworkBody({ ...base, text }).body).toBe(text);
  });
});
