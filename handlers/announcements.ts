/**
 * Announcements (R-T4): one message to several people, or the whole room, posted in the turn's room.
 * High risk, so the Guardian asks twice before it runs. Mentions come only from the directory accounts
 * of resolved members (or the platform's "all" mention), never from model text.
 */
import { z } from 'zod';
import { isAllWord } from '../src/guardian/param-values';
import { defineTool } from '../src/tools/define-tool';
import type { PersonCandidate } from '../src/tools/person-resolver';
import { ToolError } from '../src/tools/types';
import { fact } from './_describe';
import { requireSender, resolvePersonOrAsk, type PeopleContext } from './_people';

/** The distinct members the references name (each resolved in the directory; ambiguity asks). */
async function recipientsOf(ctx: PeopleContext, refs: readonly string[]): Promise<PersonCandidate[]> {
  const people = new Map<string, PersonCandidate>();
  for (const ref of refs) {
    const person = await resolvePersonOrAsk(ctx, ref);
    people.set(person.memberId, person);
  }
  return [...people.values()];
}

/** `announce`: posts one message mentioning the recipients (or everyone in the room). */
export const announce = defineTool({
  name: 'announce',
  description:
    'Post one announcement in this room mentioning the given people (names or member ids) or everyone ' +
    '(recipients: "all"), only when the sender explicitly asks. Posted as written: polite, self-contained.',
  triggerExamples: [
    '田中さんと鈴木さんに明日の会議は10時からと伝えて',
    '全員に今日は17時で閉めますとアナウンスして',
    'みんなに周知して：来週から入館証が新しくなります',
    '資料の置き場所を営業部のみんなに共有しておいて',
    'Tell everyone the office closes early today',
  ],
  input: z.object({
    recipients: z
      .union([z.literal('all'), z.array(z.string().trim().min(1).max(100)).min(1).max(50)])
      .describe('Person references, or "all" for the whole room.'),
    message: z.string().trim().min(1).max(2000).describe('The announcement text.'),
  }),
  output: z.object({
    posted: z.literal(true),
    /** Number of people mentioned, or "all". */
    recipients: z.union([z.number().int(), z.literal('all')]),
    /** Recipients without an account on this platform (named in the result, not mentioned). */
    notMentioned: z.array(z.string()),
    messageId: z.string().optional(),
  }),
  effects: ['chatwork.post'],
  effectKind: 'send_message',
  risk: 'high',
  requiresConfirmation: false,
  requiredLevel: 2,
  paramRoles: { recipients: 'recipients', message: 'text' },
  describe: async (input, ctx) => {
    const en = ctx.lang === 'en';
    const refs = input.recipients;
    const all = refs === 'all' || refs.some(isAllWord);
    const people = all ? [] : await recipientsOf(ctx, refs);
    const names = people.map((p) => p.name).join(en ? ', ' : '、');
    const counted = en ? `${people.length} people: ${names}` : `${people.length}人（${names}）`;
    const to = all ? (en ? 'everyone in this room' : 'このルームの全員') : counted;
    return {
      summary: en ? 'Post an announcement in this room.' : 'このルームにお知らせを投稿します。',
      done: en ? 'Posted an announcement in this room.' : 'このルームにお知らせを投稿しました。',
      facts: [
        fact(ctx, 'recipients', { ja: '宛先', en: 'To' }, to),
        fact(ctx, 'message', { ja: '本文', en: 'Message' }, input.message),
      ],
    };
  },
  handler: async (input, ctx) => {
    requireSender(ctx);
    const post = ctx.services.postToRoom;
    if (!post) throw new ToolError('Posting is not available in this room.', 'NO_POSTING');
    const refs = input.recipients;
    if (refs === 'all' || refs.some(isAllWord)) {
      const r = await post(input.message, { toAll: true });
      return {
        posted: true as const,
        recipients: 'all' as const,
        notMentioned: [],
        ...(r.messageId ? { messageId: r.messageId } : {}),
      };
    }
    const accounts: string[] = [];
    const notMentioned: string[] = [];
    for (const p of await recipientsOf(ctx, refs)) {
      const account = p.accounts[ctx.platform];
      if (account) accounts.push(account);
      else notMentioned.push(p.name);
    }
    if (accounts.length === 0)
      throw new ToolError(
        'None of the recipients has an account on this platform, so nobody can be mentioned here.',
        'NO_RECIPIENT_ACCOUNT',
      );
    const r = await post(input.message, { mentionAccountIds: accounts, toAll: false });
    return {
      posted: true as const,
      recipients: accounts.length,
      notMentioned,
      ...(r.messageId ? { messageId: r.messageId } : {}),
    };
  },
});
