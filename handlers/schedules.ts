/**
 * Recurring schedules people make by asking (issue 31): a reminder (「毎週月曜9時に週報のリマインドして」), a
 * digest of one's own tasks (「毎朝9時に今日のタスクを教えて」), and — from level 3, with a confirmation — a room
 * or department notice (「平日の17時に日報を出すよう営業部に声をかけて」); listing, pausing, resuming,
 * changing and cancelling them; and snoozing a reminder that just arrived (「30分後にもう一度」).
 * The rule is the structured one of src/scheduler/recurrence.ts, rendered back in Japanese in the
 * confirmation question. The directory's schedules are the administrator's: these tools never touch them.
 */
import { z } from 'zod';
import { readClosingDays, type BusinessCalendar } from '../src/core/business-calendar';
import { zonedParts } from '../src/core/zoned-time';
import { matchDepartments } from '../src/authorization/names';
import type { Db } from '../src/db/prisma';
import {
  anchorRule,
  checkedRecurrence,
  describeRule,
  listOf,
  nextOccurrence,
  RecurrenceRule,
  WEEKDAY_CODES,
} from '../src/scheduler/recurrence';
import { createReminder } from '../src/scheduler/reminders';
import {
  createChatSchedule,
  updateChatSchedule,
  type ChatScheduleChange,
  type NewChatSchedule,
} from '../src/scheduler/schedule-store';
import { formatWhen } from '../src/tools/describe';
import { defineTool } from '../src/tools/define-tool';
import { ToolError, type DescribeContext, type ToolContext } from '../src/tools/types';
import { fact } from './_describe';
import { createOnce, dbOf, memberName, requireSender, resolvePersonOrAsk, type PeopleContext } from './_people';
import { REMIND_OTHERS_LEVEL } from './reminders';
import { formatLocalIso, parseWhen } from './_when';

/** Level needed for a notice to a whole room or department. */
export const ROOM_SCHEDULE_LEVEL = 3;
/** Defaults when no limit is configured (SCHEDULES_PER_MEMBER, SCHEDULES_PER_ROOM). */
const DEFAULT_LIMITS = { perMember: 20, perRoom: 50 };
/** A snooze finds the reminder it answers among those sent this recently. */
const SNOOZE_WINDOW_MS = 12 * 3_600_000;

/**
 * The rule as the model fills it: one flat object, checked against the rule set of src/scheduler/recurrence.ts by
 * {@link checkedRule} (bounds included; it says what to fix); intervals of 30 minutes and up. The schema gives the
 * fields and their values only: what each means (freq, `weeks`, `day` / `nth` / `bday`, `start`, `from` / `until` /
 * `on`, weekdays vs business_days, the holiday default) is said once, in the system prompt ("Recurring rules"), not
 * in each of the three tools that take a rule.
 */
const hhmm = z.string().trim().max(5);
const num = z.number();
const ruleInput = z.object({
  freq: z.enum(['daily', 'weekdays', 'business_days', 'weekly', 'monthly', 'interval']),
  time: hhmm.optional(),
  days: z.array(z.enum(WEEKDAY_CODES)).max(7).optional(),
  weeks: num.optional(),
  day: listOf(z.union([num, z.literal('last')])).optional(),
  nth: listOf(z.object({ n: num, weekday: z.enum(WEEKDAY_CODES) })).optional(),
  bday: num.optional(),
  everyMinutes: num.optional(),
  from: hhmm.optional(),
  until: hhmm.optional(),
  on: z.enum(['every_day', 'weekdays', 'business_days']).optional(),
  holiday: z.enum(['skip', 'previous', 'next', 'ignore']).optional(),
  start: z.string().trim().max(10).optional(),
});
/** catch_up: a period missed while the bot was down is sent late once, or dropped; quiet_hours: sent when they
 * end, or that time is skipped. */
const catchUp = z.enum(['once', 'skip']).default('once');
const quietHours = z.enum(['deliver', 'skip']).default('deliver');
const scheduleId = z.string().trim().min(1).max(100).describe('from list_schedules');

type ScheduleRow = Awaited<ReturnType<Db['schedule']['findFirst']>> & object;
type Ctx = PeopleContext & Pick<ToolContext, 'now' | 'timezone' | 'platform' | 'roomId'>;

/** The organisation's business calendar (national holidays + its closing days). */
async function calendarOf(db: Db, orgId: string): Promise<BusinessCalendar> {
  const org = await db.organization.findUnique({ where: { id: orgId }, select: { closingDays: true } });
  return { closingDays: readClosingDays(org?.closingDays) };
}

/** Rules made by asking repeat every 30 minutes at most. */
const CHAT_RULE = checkedRecurrence(30);

/**
 * A rule the store accepts, or a ToolError telling the model what to fix. An every-N-weeks rule without a start
 * counts its weeks from the week of its first date after now (a stored one keeps that week).
 */
async function checkedRule(value: unknown, ctx: Ctx): Promise<RecurrenceRule> {
  const r = CHAT_RULE.safeParse(value);
  if (!r.success) {
    const why = r.error.issues.map((i) => i.message).join('; ');
    throw new ToolError(`The recurrence rule is not valid (${why}); ask the person when it should repeat.`, 'BAD_RULE');
  }
  return anchorRule(r.data, ctx.now(), ctx.timezone, await calendarOf(dbOf(ctx), ctx.orgId));
}

/** The first period from now, or a ToolError for a rule that never fires. */
async function firstRun(ctx: Ctx, rule: RecurrenceRule): Promise<Date> {
  const next = nextOccurrence(rule, ctx.now(), ctx.timezone, await calendarOf(dbOf(ctx), ctx.orgId));
  if (!next) throw new ToolError('That rule has no date within a year; ask the person again.', 'NO_OCCURRENCE');
  return next;
}

/** Refuses a new schedule past the member's or the room's limit, with the sentence to say. */
async function assertWithinLimits(ctx: Ctx & { services: { scheduleLimits?: typeof DEFAULT_LIMITS } }) {
  const sender = requireSender(ctx);
  const limits = ctx.services.scheduleLimits ?? DEFAULT_LIMITS;
  const db = dbOf(ctx);
  const live = { orgId: ctx.orgId, source: 'chat', cancelledAt: null };
  const [mine, room] = await Promise.all([
    db.schedule.count({ where: { ...live, ownerMemberId: sender.id } }),
    db.schedule.count({ where: { ...live, platform: ctx.platform, roomId: ctx.roomId } }),
  ]);
  if (mine >= limits.perMember) {
    throw new ToolError(
      `The sender already has ${mine} recurring schedules (limit ${limits.perMember}). Tell them: ` +
        `「定期の予定は1人${limits.perMember}件までです。いらなくなったものを取り消してから、もう一度お願いします」 ` +
        'and offer list_schedules.',
      'LIMIT_MEMBER',
    );
  }
  if (room >= limits.perRoom) {
    throw new ToolError(
      `This room already holds ${room} recurring schedules (limit ${limits.perRoom}). Tell them: ` +
        `「このルームの定期の予定は${limits.perRoom}件までです。不要なものを取り消してからお願いします」.`,
      'LIMIT_ROOM',
    );
  }
}

const whenJa = (at: Date, ctx: Pick<DescribeContext, 'timezone' | 'lang' | 'now'>) =>
  formatWhen(at, { timezone: ctx.timezone, lang: ctx.lang, now: ctx.now(), dateOnly: false });

const KIND_JA: Record<string, string> = {
  reminder: 'リマインド',
  digest: '自分のタスクのまとめ',
  room_reminder: 'ルームへの定期連絡',
};

const scheduleOut = z.object({
  scheduleId: z.string(),
  kind: z.string(),
  repeat: z.string(),
  text: z.string().nullable(),
  nextRun: z.string().nullable(),
  paused: z.boolean(),
  person: z.string().nullable(),
});

async function showSchedule(db: Db, s: ScheduleRow, timezone: string): Promise<z.infer<typeof scheduleOut>> {
  const rule = RecurrenceRule.safeParse(s.rule);
  return {
    scheduleId: s.id,
    kind: s.kind,
    repeat: rule.success ? describeRule(rule.data) : '',
    text: s.text,
    nextRun: s.enabled && s.nextRunAt ? formatLocalIso(s.nextRunAt, timezone) : null,
    paused: !s.enabled,
    person: s.targetMemberId ? await memberName(db, s.orgId, s.targetMemberId) : null,
  };
}

/** Who a personal reminder is for: the sender, or (from level 2) someone else. */
async function remindedPerson(ctx: PeopleContext, ref: string | undefined) {
  const sender = requireSender(ctx);
  const target = ref ? await resolvePersonOrAsk(ctx, ref) : { memberId: sender.id, name: sender.name };
  if (target.memberId !== sender.id && sender.level < REMIND_OTHERS_LEVEL) {
    throw new ToolError('The sender may only set recurring reminders for themselves.', 'FORBIDDEN');
  }
  return target;
}

/** The personal schedule input, checked the same way by `describe` and the handler. */
function readPersonal(input: { kind: 'reminder' | 'digest'; text?: string; person?: string }) {
  if (input.kind === 'reminder' && !input.text) {
    throw new ToolError('A reminder needs its text; ask the person what to remind them of.', 'NO_TEXT');
  }
  if (input.kind === 'digest' && input.person) {
    throw new ToolError(
      'A digest is only ever of the sender’s own tasks; it cannot be set for someone else.',
      'FORBIDDEN',
    );
  }
}

/** `create_schedule`: a recurring reminder (for oneself, or someone else from level 2) or a digest of one's tasks. */
export const createSchedule = defineTool({
  name: 'create_schedule',
  description:
    'RECURRING reminder (for the sender, or another member from level 2) or digest of the sender’s own tasks, ' +
    'in this room. One-off: create_reminder; whole room/department: create_room_schedule.',
  triggerExamples: [
    '毎週月曜9時に週報のリマインドして',
    '毎朝9時に今日のタスクを教えて',
    '平日の18時に勤怠の入力を思い出させて',
    '毎月末に経費精算のリマインドをお願い',
    '営業時間中は1時間ごとにストレッチするよう声をかけて',
    'Remind me every Monday at 10am to send the weekly report',
  ],
  effects: ['db.schedule_create'],
  effectKind: 'remind',
  risk: 'none',
  requiredLevel: 1,
  requiresConfirmation: true,
  paramRoles: { person: 'reminder_target', text: 'text' },
  input: z.object({
    kind: z.enum(['reminder', 'digest']),
    rule: ruleInput,
    text: z.string().trim().min(1).max(500).optional().describe('reminders only'),
    person: z.string().trim().min(1).max(200).optional().describe('who is reminded; omit for the sender'),
    catch_up: catchUp,
    quiet_hours: quietHours,
  }),
  output: z.object({ schedule: scheduleOut }),
  async describe(input, ctx) {
    readPersonal(input);
    const rule = await checkedRule(input.rule, ctx);
    const target = input.kind === 'reminder' ? await remindedPerson(ctx, input.person) : null;
    await assertWithinLimits(ctx);
    const next = await firstRun(ctx, rule);
    const facts = [
      fact(ctx, 'kind', { ja: '種類', en: 'Kind' }, KIND_JA[input.kind]),
      fact(ctx, 'rule', { ja: '繰り返し', en: 'Repeats' }, describeRule(rule, ctx.lang)),
      fact(ctx, 'next', { ja: '初回', en: 'First' }, whenJa(next, ctx)),
      ...(target ? [fact(ctx, 'person', { ja: '相手', en: 'For' }, target.name)] : []),
      ...(input.text ? [fact(ctx, 'text', { ja: '内容', en: 'About' }, input.text)] : []),
      ...(input.quiet_hours === 'skip'
        ? [fact(ctx, 'quiet', { ja: '夜間・休息時間', en: 'Quiet hours' }, 'その回は送りません')]
        : []),
    ];
    const en = ctx.lang === 'en';
    const summary = en ? 'Create this recurring schedule.' : 'この定期の予定を登録します。';
    return { summary, done: en ? 'Created this recurring schedule.' : 'この定期の予定を登録しました。', facts };
  },
  async handler(input, ctx) {
    const { row } = await storeScheduleOnce(ctx, async () => {
      readPersonal(input);
      const rule = await checkedRule(input.rule, ctx);
      const target = input.kind === 'reminder' ? await remindedPerson(ctx, input.person) : null;
      await assertWithinLimits(ctx);
      return {
        kind: input.kind,
        targetMemberId: target?.memberId ?? null,
        departmentId: null,
        text: input.text ?? null,
        rule,
        catchUp: input.catch_up,
        quietPolicy: input.quiet_hours,
        nextRunAt: await firstRun(ctx, rule),
      };
    });
    return { schedule: await showSchedule(dbOf(ctx), row, ctx.timezone) };
  },
});

/**
 * The schedule this call's idempotency key already stored (a retried call: nothing is checked or written again),
 * else the one `prepare` checks and describes, stored once under the key for the sender in this room.
 */
async function storeScheduleOnce(
  ctx: PeopleContext & ToolContext,
  prepare: () => Promise<
    Omit<NewChatSchedule, 'orgId' | 'ownerMemberId' | 'platform' | 'roomId' | 'timezone' | 'idempotencyKey'>
  >,
) {
  const sender = requireSender(ctx);
  const db = dbOf(ctx);
  const key = ctx.idempotencyKey || null;
  const find = () => (key ? db.schedule.findUnique({ where: { idempotencyKey: key } }) : Promise.resolve(null));
  const earlier = await find();
  if (earlier) return { row: earlier, created: false };
  const fields = await prepare();
  const common = { orgId: ctx.orgId, ownerMemberId: sender.id, platform: ctx.platform, roomId: ctx.roomId };
  return createOnce(
    find,
    () => createChatSchedule(db, { ...common, ...fields, timezone: ctx.timezone, idempotencyKey: key }),
    { foundNothing: true },
  );
}

/** The department a room notice names, if any. */
async function departmentOf(ctx: PeopleContext, ref: string | undefined): Promise<{ id: string; name: string } | null> {
  if (!ref) return null;
  const db = dbOf(ctx);
  const depts = await db.department.findMany({ where: { orgId: ctx.orgId } });
  // The Gate's reading of the same reference (names, aliases and ids; issue 40).
  const hit = matchDepartments(ref, depts);
  if (hit.length !== 1) {
    throw new ToolError(`No single department matches "${ref}"; ask which department is meant.`, 'UNKNOWN_DEPARTMENT');
  }
  return { id: hit[0]!.id, name: hit[0]!.name };
}

/** `create_room_schedule`: a recurring notice to this room, or mentioning one department's members (level 3+). */
export const createRoomSchedule = defineTool({
  name: 'create_room_schedule',
  description:
    "RECURRING notice to this whole room, or mentioning one department's members. " + `Level ${ROOM_SCHEDULE_LEVEL}+.`,
  triggerExamples: [
    '平日の17時に日報を出すよう営業部に声をかけて',
    '毎月25日にこのルームで経費精算の締めを知らせて',
    'Every Monday at 9, post a reminder in this room about the team meeting',
  ],
  effects: ['db.schedule_create'],
  effectKind: 'remind',
  risk: 'medium',
  requiredLevel: ROOM_SCHEDULE_LEVEL,
  requiresConfirmation: true,
  paramRoles: { department: 'target_department', text: 'text' },
  input: z.object({
    rule: ruleInput,
    text: z.string().trim().min(1).max(500).describe('What the notice says.'),
    department: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .optional()
      .describe('department name, alias or id; omit for the whole room'),
    catch_up: catchUp,
    quiet_hours: quietHours,
  }),
  output: z.object({ schedule: scheduleOut, department: z.string().nullable() }),
  async describe(input, ctx) {
    const rule = await checkedRule(input.rule, ctx);
    const dept = await departmentOf(ctx, input.department);
    await assertWithinLimits(ctx);
    const next = await firstRun(ctx, rule);
    const facts = [
      fact(ctx, 'rule', { ja: '繰り返し', en: 'Repeats' }, describeRule(rule, ctx.lang)),
      fact(ctx, 'next', { ja: '初回', en: 'First' }, whenJa(next, ctx)),
      fact(ctx, 'to', { ja: '宛先', en: 'To' }, dept ? `${dept.name}のメンバー（このルーム）` : 'このルームの全員'),
      fact(ctx, 'text', { ja: '内容', en: 'About' }, input.text),
    ];
    const en = ctx.lang === 'en';
    const summary = en ? 'Post this notice in this room, repeatedly.' : 'このルームに定期連絡を登録します。';
    return {
      summary,
      done: en ? 'Set up this repeating notice in this room.' : 'このルームに定期連絡を登録しました。',
      facts,
    };
  },
  async handler(input, ctx) {
    let dept: { id: string; name: string } | null = null;
    const { row, created } = await storeScheduleOnce(ctx, async () => {
      const rule = await checkedRule(input.rule, ctx);
      dept = await departmentOf(ctx, input.department);
      await assertWithinLimits(ctx);
      return {
        kind: 'room_reminder',
        targetMemberId: null,
        departmentId: dept?.id ?? null,
        text: input.text,
        rule,
        catchUp: input.catch_up,
        quietPolicy: input.quiet_hours,
        nextRunAt: await firstRun(ctx, rule),
      };
    });
    // A retried call shows the schedule its first attempt stored (with that attempt's department).
    if (!created) dept = row.departmentId ? await departmentOf(ctx, row.departmentId) : null;
    return { schedule: await showSchedule(dbOf(ctx), row, ctx.timezone), department: dept?.name ?? null };
  },
});

/** `list_schedules`: the recurring schedules the sender made, and those that remind them. */
export const listSchedules = defineTool({
  name: 'list_schedules',
  description: "The sender's recurring schedules (made by or for them): ids, repeat, next time.",
  triggerExamples: [
    '定期のリマインド、何が入ってる？',
    '毎週の通知を一覧で見せて',
    'What recurring reminders do I have?',
  ],
  effects: [],
  risk: 'none',
  requiredLevel: 1,
  input: z.object({}),
  output: z.object({ schedules: z.array(scheduleOut) }),
  async handler(_input, ctx) {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const rows = await db.schedule.findMany({
      where: {
        orgId: ctx.orgId,
        source: 'chat',
        cancelledAt: null,
        OR: [{ ownerMemberId: sender.id }, { targetMemberId: sender.id }],
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: 100,
    });
    return { schedules: await Promise.all(rows.map((r) => showSchedule(db, r, ctx.timezone))) };
  },
});

/** One of the sender's own chat schedules, or a ToolError (the directory's are the administrator's). */
async function ownSchedule(ctx: PeopleContext, id: string): Promise<ScheduleRow> {
  const sender = requireSender(ctx);
  const db = dbOf(ctx);
  const s = await db.schedule.findFirst({ where: { id, orgId: ctx.orgId } });
  if (s && s.source !== 'chat') {
    throw new ToolError(
      'That schedule comes from the organisation directory: only the administrator changes it (the directory ' +
        'file). The person can turn that kind of notice off for themselves with set_notice_preference.',
      'DIRECTORY_SCHEDULE',
    );
  }
  if (!s || s.cancelledAt || s.ownerMemberId !== sender.id) {
    throw new ToolError(`The sender has no schedule with id "${id}" (see list_schedules).`, 'NOT_FOUND');
  }
  return s;
}

function scheduleFacts(s: ScheduleRow, ctx: Pick<DescribeContext, 'lang'>) {
  const rule = RecurrenceRule.safeParse(s.rule);
  return [
    fact(ctx, 'kind', { ja: '種類', en: 'Kind' }, KIND_JA[s.kind] ?? s.kind),
    fact(ctx, 'rule', { ja: '繰り返し', en: 'Repeats' }, rule.success ? describeRule(rule.data, ctx.lang) : ''),
    ...(s.text ? [fact(ctx, 'text', { ja: '内容', en: 'About' }, s.text)] : []),
  ];
}

/** A pause/resume/cancel tool: the sender's own schedule, one state change, idempotent on retry. */
function stateTool(o: {
  name: string;
  description: string;
  triggerExamples: string[];
  effectKind: 'update' | 'cancel';
  summary: { ja: string; en: string };
  done: { ja: string; en: string };
  change: (s: ScheduleRow, ctx: Ctx) => Promise<ChatScheduleChange>;
}) {
  return defineTool({
    name: o.name,
    description: o.description,
    triggerExamples: o.triggerExamples,
    effects: ['db.schedule_update'],
    effectKind: o.effectKind,
    risk: 'none',
    requiredLevel: 1,
    input: z.object({ schedule_id: scheduleId }),
    output: z.object({ schedule: scheduleOut, cancelled: z.boolean() }),
    async describe(input, ctx) {
      const s = await ownSchedule(ctx, input.schedule_id);
      return { summary: o.summary[ctx.lang], done: o.done[ctx.lang], facts: scheduleFacts(s, ctx) };
    },
    async handler(input, ctx) {
      const db = dbOf(ctx);
      const found = await db.schedule.findFirst({ where: { id: input.schedule_id, orgId: ctx.orgId } });
      // A retried cancel finds its own earlier work done.
      if (found?.cancelledAt && found.ownerMemberId === ctx.member?.id && o.effectKind === 'cancel') {
        return { schedule: await showSchedule(db, found, ctx.timezone), cancelled: true };
      }
      const s = await ownSchedule(ctx, input.schedule_id);
      await updateChatSchedule(db, s.id, await o.change(s, ctx));
      const now = await db.schedule.findUniqueOrThrow({ where: { id: s.id } });
      return { schedule: await showSchedule(db, now, ctx.timezone), cancelled: now.cancelledAt !== null };
    },
  });
}

export const pauseSchedule = stateTool({
  name: 'pause_schedule',
  description: "Pause one of the sender's recurring schedules.",
  triggerExamples: ['週報のリマインド、しばらく止めて', '毎朝の通知、来週まで休止して', 'Pause my daily reminder'],
  effectKind: 'update',
  summary: { ja: 'この定期の予定を一時停止します。', en: 'Pause this schedule.' },
  done: { ja: 'この定期の予定を一時停止しました。', en: 'Paused this schedule.' },
  change: async () => ({ enabled: false, nextRunAt: null }),
});

export const resumeSchedule = stateTool({
  name: 'resume_schedule',
  description: "Resume one of the sender's paused recurring schedules.",
  triggerExamples: ['週報のリマインドを再開して', '止めていた定期の通知をまた始めて'],
  effectKind: 'update',
  summary: { ja: 'この定期の予定を再開します。', en: 'Resume this schedule.' },
  done: { ja: 'この定期の予定を再開しました。', en: 'Resumed this schedule.' },
  change: async (s, ctx) => ({ enabled: true, nextRunAt: await firstRun(ctx, await checkedRule(s.rule, ctx)) }),
});

export const cancelSchedule = stateTool({
  name: 'cancel_schedule',
  description: "Cancel one of the sender's recurring schedules for good.",
  triggerExamples: [
    '週報のリマインドはもういらない、消して',
    '毎週のリマインドを削除して',
    'Stop the weekly reminder for good',
  ],
  effectKind: 'cancel',
  summary: { ja: 'この定期の予定を取り消します。', en: 'Cancel this schedule.' },
  done: { ja: 'この定期の予定を取り消しました。', en: 'Cancelled this schedule.' },
  change: async (_s, ctx) => ({ enabled: false, nextRunAt: null, cancelledAt: ctx.now() }),
});

/** `change_schedule`: a new rule, text or policy for one of the sender's own recurring schedules. */
export const changeSchedule = defineTool({
  name: 'change_schedule',
  description: "Change one of the sender's recurring schedules (a rule replaces the whole rule).",
  triggerExamples: [
    '週報のリマインドを月曜10時に変えて',
    '毎朝の通知を8時半にずらして',
    'Change my weekly reminder to Tuesdays',
  ],
  effects: ['db.schedule_update'],
  effectKind: 'update',
  risk: 'none',
  requiredLevel: 1,
  requiresConfirmation: true,
  input: z.object({
    schedule_id: scheduleId,
    rule: ruleInput.optional(),
    text: z.string().trim().min(1).max(500).optional(),
    catch_up: z.enum(['once', 'skip']).optional(),
    quiet_hours: z.enum(['deliver', 'skip']).optional(),
  }),
  output: z.object({ schedule: scheduleOut }),
  async describe(input, ctx) {
    const s = await ownSchedule(ctx, input.schedule_id);
    const rule = await checkedRule(input.rule ?? s.rule, ctx);
    const facts = [
      fact(ctx, 'rule', { ja: '繰り返し', en: 'Repeats' }, describeRule(rule, ctx.lang)),
      fact(ctx, 'next', { ja: '次回', en: 'Next' }, whenJa(await firstRun(ctx, rule), ctx)),
      ...((input.text ?? s.text) ? [fact(ctx, 'text', { ja: '内容', en: 'About' }, input.text ?? s.text)] : []),
    ];
    const en = ctx.lang === 'en';
    const summary = en ? 'Change this schedule.' : 'この定期の予定を変更します。';
    return { summary, done: en ? 'Changed this schedule.' : 'この定期の予定を変更しました。', facts };
  },
  async handler(input, ctx) {
    const db = dbOf(ctx);
    const s = await ownSchedule(ctx, input.schedule_id);
    const rule = input.rule ? await checkedRule(input.rule, ctx) : undefined;
    const change: ChatScheduleChange = {
      ...(rule ? { rule } : {}),
      ...(input.text ? { text: input.text } : {}),
      ...(input.catch_up ? { catchUp: input.catch_up } : {}),
      ...(input.quiet_hours ? { quietPolicy: input.quiet_hours } : {}),
    };
    if (rule && s.enabled) change.nextRunAt = await firstRun(ctx, rule);
    await updateChatSchedule(db, s.id, change);
    return {
      schedule: await showSchedule(db, await db.schedule.findUniqueOrThrow({ where: { id: s.id } }), ctx.timezone),
    };
  },
});

/**
 * `snooze_reminder`: 「あとで」「30分後にもう一度」「次の営業日にもう一回」 said to a reminder that just arrived — that
 * reminder comes again after the given minutes, or at a given time (a bare date: at the reminder's own time of day
 * that day). It answers the newest reminder sent to the sender in this room in the last 12 hours.
 */
export const snoozeReminder = defineTool({
  name: 'snooze_reminder',
  description: 'Send the reminder the sender just got here again, after `minutes` (「あとで」 = 30) or at `at`.',
  triggerExamples: ['30分後にもう一度言って', '次の営業日にもう一回', 'あとで', '10分後にまた教えて', 'snooze'],
  effects: ['db.reminder_create'],
  effectKind: 'remind',
  risk: 'none',
  requiredLevel: 1,
  paramRoles: { at: 'date' },
  input: z.object({
    minutes: z
      .number()
      .int()
      .min(5)
      .max(24 * 60)
      .optional(),
    at: z.string().trim().min(1).max(40).optional().describe('ISO date-time, or a date (same time of day)'),
  }),
  output: z.object({ reminderId: z.string(), remindAt: z.string(), text: z.string() }),
  async handler(input, ctx) {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const key = ctx.idempotencyKey || null;
    const find = () => (key ? db.reminder.findUnique({ where: { idempotencyKey: key } }) : Promise.resolve(null));
    const earlier = await find();
    const show = (r: { id: string; remindAt: Date; text: string }) => ({
      reminderId: r.id,
      remindAt: formatLocalIso(r.remindAt, ctx.timezone),
      text: r.text,
    });
    if (earlier) return show(earlier);
    const now = ctx.now();
    const last = await db.reminder.findFirst({
      where: {
        orgId: ctx.orgId,
        platform: ctx.platform,
        roomId: ctx.roomId,
        memberId: sender.id,
        audience: 'member',
        status: 'sent',
        remindAt: { gte: new Date(now.getTime() - SNOOZE_WINDOW_MS), lte: now },
      },
      orderBy: [{ remindAt: 'desc' }, { createdAt: 'desc' }],
    });
    if (!last) {
      throw new ToolError(
        'No reminder was sent to the sender in this room in the last 12 hours; ask what to remind them of and when ' +
          '(create_reminder).',
        'NOTHING_TO_SNOOZE',
      );
    }
    const remindAt = snoozedUntil(input, last.remindAt, ctx);
    const { row } = await createOnce(
      find,
      () =>
        createReminder(db, {
          orgId: ctx.orgId,
          platform: ctx.platform,
          roomId: ctx.roomId,
          memberId: sender.id,
          text: last.text,
          remindAt,
          idempotencyKey: key,
          quietPolicy: last.quietPolicy === 'skip' ? 'skip' : 'deliver',
          snoozedFromId: last.id,
        }),
      { foundNothing: true },
    );
    return show(row);
  },
});

/** When a snoozed reminder comes again: `at` (a bare date keeps the reminder's time of day), else minutes from now. */
function snoozedUntil(input: { minutes?: number; at?: string }, sentAt: Date, ctx: Ctx): Date {
  const now = ctx.now();
  if (input.at === undefined) return new Date(now.getTime() + (input.minutes ?? 30) * 60_000);
  const p = zonedParts(sentAt, ctx.timezone);
  const when = parseWhen(input.at, ctx.timezone, { hh: p.hh, mm: p.mm, ss: 0 });
  if (!when) {
    throw new ToolError('"at" must be an ISO date-time or a date (YYYY-MM-DD); ask the person when.', 'INVALID_DATE');
  }
  if (when.at.getTime() <= now.getTime()) {
    throw new ToolError('That time has already passed; ask the person for a later time.', 'PAST_TIME');
  }
  return when.at;
}
