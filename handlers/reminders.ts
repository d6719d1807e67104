/**
 * Reminder capabilities (R-T4): a one-off reminder posted in the room where it was asked for, the
 * sender's scheduled reminders, and cancelling one of them. The notice itself is sent by the scheduler.
 */
import { z } from 'zod';
import { defineTool } from '../src/tools/define-tool';
import { ToolError } from '../src/tools/types';
import { fact, showWhen } from './_describe';
import { createOnce, dbOf, memberName, requireSender, resolvePersonOrAsk, type PeopleContext } from './_people';
import { formatLocalIso, parseWhen, type ParsedWhen } from './_when';
import {
  cancelReminder as cancelStoredReminder,
  CANCELLABLE_REMINDER,
  createReminder as storeReminder,
} from '../src/scheduler/reminders';

/** Time of day used when a reminder is given as a bare date. */
export const REMINDER_DEFAULT_TIME = { hh: 9, mm: 0, ss: 0 } as const;
/** Level needed to remind someone other than oneself. */
export const REMIND_OTHERS_LEVEL = 2;
const LIST_LIMIT = 20;
const CANCELLABLE = CANCELLABLE_REMINDER;

const personOut = z.object({ memberId: z.string(), name: z.string() });

/** The reminder's time, or a ToolError asking for one. */
function readWhen(value: string, ctx: { timezone: string }): ParsedWhen {
  const when = parseWhen(value, ctx.timezone, REMINDER_DEFAULT_TIME);
  if (!when) {
    const why = '"when" must be an ISO date-time with offset or a date (YYYY-MM-DD); ask the person for the time.';
    throw new ToolError(why, 'INVALID_DATE');
  }
  return when;
}

/** Refuses a time that has passed. */
function assertFuture(when: ParsedWhen, ctx: { now: () => Date }): void {
  if (when.at.getTime() <= ctx.now().getTime()) {
    throw new ToolError('That time has already passed; ask the person for a future time.', 'PAST_TIME');
  }
}

/** Who is reminded (the sender by default); reminding others needs level {@link REMIND_OTHERS_LEVEL}. */
async function reminded(ctx: PeopleContext, ref: string | undefined): Promise<{ memberId: string; name: string }> {
  const sender = requireSender(ctx);
  const target = ref ? await resolvePersonOrAsk(ctx, ref) : { memberId: sender.id, name: sender.name };
  if (target.memberId !== sender.id && sender.level < REMIND_OTHERS_LEVEL) {
    throw new ToolError('The sender may only set reminders for themselves.', 'FORBIDDEN');
  }
  return target;
}

/** `create_reminder`: remind the sender (or, from level 2, someone else) at a given time. */
export const createReminder = defineTool({
  name: 'create_reminder',
  description:
    'Schedule a one-off reminder message in this room at a given time, for the sender (default) or ' +
    'another member. ' +
    'Everyone may remind themselves; reminding someone else needs level 2 or higher.',
  triggerExamples: ['明日の9時に請求書の件をリマインドして', '金曜15時に田中太郎さんに会議資料のことをリマインドして'],
  effects: ['db.reminder_create'],
  effectKind: 'remind',
  risk: 'none',
  requiredLevel: 1,
  paramRoles: { when: 'date', person: 'reminder_target', text: 'text' },
  input: z.object({
    when: z
      .string()
      .trim()
      .min(1)
      .max(40)
      .describe(
        'When: ISO date-time with offset (e.g. 2026-12-01T15:00:00+09:00), or YYYY-MM-DD meaning 09:00 that day.',
      ),
    text: z.string().trim().min(1).max(1000).describe('What to remind about.'),
    person: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('Who is reminded: name, alias, member id. Omit for the sender.'),
  }),
  output: z.object({ reminderId: z.string(), remindAt: z.string(), person: personOut, text: z.string() }),
  async describe(input, ctx) {
    const when = readWhen(input.when, ctx);
    assertFuture(when, ctx);
    const target = await reminded(ctx, input.person);
    const facts = [
      fact(ctx, 'when', { ja: '日時', en: 'When' }, showWhen({ at: when.at, dateOnly: false }, ctx)),
      fact(ctx, 'person', { ja: '相手', en: 'For' }, target.name),
      fact(ctx, 'text', { ja: '内容', en: 'About' }, input.text),
    ];
    const en = ctx.lang === 'en';
    return {
      summary: en ? 'Post a reminder in this room.' : 'このルームでリマインドします。',
      done: en ? 'Set a reminder in this room.' : 'このルームでのリマインドを登録しました。',
      facts,
    };
  },
  async handler(input, ctx) {
    requireSender(ctx);
    const db = dbOf(ctx);
    const when = readWhen(input.when, ctx);
    const key = ctx.idempotencyKey || null;
    const find = () => (key ? db.reminder.findUnique({ where: { idempotencyKey: key } }) : Promise.resolve(null));
    const earlier = await find();
    if (earlier) {
      const name = await memberName(db, earlier.orgId, earlier.memberId);
      return {
        reminderId: earlier.id,
        remindAt: formatLocalIso(earlier.remindAt, ctx.timezone),
        person: { memberId: earlier.memberId, name },
        text: earlier.text,
      };
    }
    assertFuture(when, ctx);
    const target = await reminded(ctx, input.person);
    const { row } = await createOnce(find, () =>
      storeReminder(db, {
        orgId: ctx.orgId,
        platform: ctx.platform,
        roomId: ctx.roomId,
        memberId: target.memberId,
        text: input.text,
        remindAt: when.at,
        idempotencyKey: key,
      }),
    );
    return {
      reminderId: row.id,
      remindAt: formatLocalIso(row.remindAt, ctx.timezone),
      person: { memberId: target.memberId, name: target.name },
      text: row.text,
    };
  },
});

/** `list_reminders`: the sender's scheduled reminders, soonest first. */
export const listReminders = defineTool({
  name: 'list_reminders',
  description: `List the sender's scheduled (not yet sent) reminders, soonest first, at most ${LIST_LIMIT}.`,
  triggerExamples: ['リマインダーの一覧を見せて', '設定したリマインドは？', 'What reminders have I set?'],
  effects: [],
  risk: 'none',
  requiredLevel: 1,
  input: z.object({}),
  output: z.object({
    reminders: z.array(z.object({ reminderId: z.string(), remindAt: z.string(), text: z.string() })),
    more: z.boolean(),
  }),
  async handler(_input, ctx) {
    const sender = requireSender(ctx);
    const rows = await dbOf(ctx).reminder.findMany({
      where: { orgId: ctx.orgId, memberId: sender.id, status: { in: CANCELLABLE } },
      orderBy: [{ remindAt: 'asc' }, { id: 'asc' }],
      take: LIST_LIMIT + 1,
    });
    return {
      reminders: rows
        .slice(0, LIST_LIMIT)
        .map((r) => ({ reminderId: r.id, remindAt: formatLocalIso(r.remindAt, ctx.timezone), text: r.text })),
      more: rows.length > LIST_LIMIT,
    };
  },
});

/** The sender's own reminder, or a ToolError. */
async function ownReminder(ctx: PeopleContext, id: string) {
  const sender = requireSender(ctx);
  const r = await dbOf(ctx).reminder.findFirst({ where: { id, orgId: ctx.orgId, memberId: sender.id } });
  if (!r) throw new ToolError(`The sender has no reminder with id "${id}".`, 'NOT_FOUND');
  return r;
}

/** Why a reminder can no longer be cancelled, said honestly (sent, or already on its way). */
function tooLate(status: string): ToolError | null {
  if (status === 'sent') return new ToolError('That reminder has already been sent.', 'ALREADY_SENT');
  if (status === 'sending') {
    const why =
      'That reminder is being sent right now and can no longer be stopped; ' +
      'tell the person it is already on its way.';
    return new ToolError(why, 'ALREADY_ON_ITS_WAY');
  }
  return null;
}

/**
 * `cancel_reminder`: cancels one of the sender's own reminders — also one the scheduler has already
 * queued (its notice is then never sent); one that is being sent is reported as on its way.
 */
export const cancelReminder = defineTool({
  name: 'cancel_reminder',
  description: "Cancel one of the sender's own scheduled reminders by its id (from list_reminders).",
  triggerExamples: [
    '明日のリマインドはやっぱり取り消して',
    'さっきのリマインダーをキャンセルして',
    'Cancel my reminder for tomorrow',
  ],
  effects: ['db.reminder_update'],
  effectKind: 'cancel',
  risk: 'none',
  requiredLevel: 1,
  input: z.object({ reminder_id: z.string().trim().min(1).max(100).describe('The reminder id.') }),
  output: z.object({ reminderId: z.string(), status: z.literal('cancelled'), alreadyCancelled: z.boolean() }),
  async describe(input, ctx) {
    const r = await ownReminder(ctx, input.reminder_id);
    const facts = [
      fact(ctx, 'when', { ja: '日時', en: 'When' }, showWhen({ at: r.remindAt, dateOnly: false }, ctx)),
      fact(ctx, 'text', { ja: '内容', en: 'About' }, r.text),
    ];
    const en = ctx.lang === 'en';
    return {
      summary: en ? 'Cancel this reminder.' : 'このリマインドを取り消します。',
      done: en ? 'Cancelled this reminder.' : 'このリマインドを取り消しました。',
      facts,
    };
  },
  async handler(input, ctx) {
    const db = dbOf(ctx);
    const r = await ownReminder(ctx, input.reminder_id);
    if (r.status === 'cancelled') return { reminderId: r.id, status: 'cancelled' as const, alreadyCancelled: true };
    const late = tooLate(r.status);
    if (late) throw late;
    // Conditional on the state: the notice runner moves queued → sending in the same way before it posts.
    const cancelled = await cancelStoredReminder(db, r.id);
    if (!cancelled) {
      const now = await db.reminder.findUnique({ where: { id: r.id }, select: { status: true } });
      const lateNow = tooLate(now?.status ?? 'cancelled');
      if (lateNow) throw lateNow;
    }
    return { reminderId: r.id, status: 'cancelled' as const, alreadyCancelled: !cancelled };
  },
});
