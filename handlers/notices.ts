/**
 * Proactive notice preferences (R-P3): a member turns the morning digest, deadline reminders or goal
 * check-ins off or on by asking the bot (「朝のまとめはもういらない」). Only for themselves; their choice
 * wins over the directory's `notices_opt_out` and survives directory imports.
 */
import { z } from 'zod';
import { PREFERENCE_KINDS, noticesEnabled } from '../src/scheduler/notices/preferences';
import { defineTool } from '../src/tools/define-tool';
import { dbOf, requireSender } from './_people';

const NOTICE_KINDS = ['daily_digest', 'deadline_reminder', 'goal_checkin'] as const;
const settings = z.object({ daily_digest: z.boolean(), deadline_reminder: z.boolean(), goal_checkin: z.boolean() });

async function currentSettings(
  db: ReturnType<typeof dbOf>,
  orgId: string,
  memberId: string,
): Promise<z.infer<typeof settings>> {
  const [member, prefs] = await Promise.all([
    db.member.findUnique({ where: { orgId_id: { orgId, id: memberId } }, select: { noticesOptOut: true } }),
    db.noticePreference.findMany({ where: { orgId, memberId } }),
  ]);
  const optOut = member?.noticesOptOut ?? false;
  return {
    daily_digest: noticesEnabled(optOut, prefs, 'daily_digest'),
    deadline_reminder: noticesEnabled(optOut, prefs, 'deadline_reminder'),
    goal_checkin: noticesEnabled(optOut, prefs, 'goal_checkin'),
  };
}

/** `set_notice_preference`: the sender turns one kind of proactive notice (or all of them) off or on. */
export const setNoticePreference = defineTool({
  name: 'set_notice_preference',
  description:
    "Turn the sender's own proactive notices off or on: daily_digest (morning summary), deadline_reminder " +
    '(tasks due soon or overdue), goal_checkin (weekly), or all. Returns the resulting settings.',
  triggerExamples: [
    '朝のまとめはもういらない',
    '期限のリマインドをまた送って',
    '定期通知を全部止めて',
    'stop the morning digest',
  ],
  effects: ['db.notice_preference'],
  effectKind: 'update',
  risk: 'none',
  requiredLevel: 1,
  input: z.object({
    kind: z.enum(PREFERENCE_KINDS).describe('Which notices: daily_digest, deadline_reminder, goal_checkin, or all.'),
    enabled: z.boolean().describe('false = stop sending them, true = send them again.'),
  }),
  output: z.object({ changed: z.string(), enabled: z.boolean(), settings }),
  async handler(input, ctx) {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const key = { orgId: ctx.orgId, memberId: sender.id };
    await db.$transaction(async (tx) => {
      // "all" replaces the per-kind choices, so the latest wish is what counts.
      if (input.kind === 'all')
        await tx.noticePreference.deleteMany({ where: { ...key, kind: { in: [...NOTICE_KINDS] } } });
      await tx.noticePreference.upsert({
        where: { orgId_memberId_kind: { ...key, kind: input.kind } },
        create: { ...key, kind: input.kind, enabled: input.enabled },
        update: { enabled: input.enabled },
      });
    });
    return { changed: input.kind, enabled: input.enabled, settings: await currentSettings(db, ctx.orgId, sender.id) };
  },
});

/** `get_notice_preferences`: which proactive notices the sender receives. */
export const getNoticePreferences = defineTool({
  name: 'get_notice_preferences',
  description: 'Show which proactive notices the sender receives (daily_digest, deadline_reminder, goal_checkin).',
  triggerExamples: ['定期通知の設定はどうなってる？', '朝のまとめは届く設定？', 'Which notices do I get?'],
  effects: [],
  risk: 'none',
  requiredLevel: 1,
  input: z.object({}),
  output: z.object({ settings }),
  async handler(_input, ctx) {
    const sender = requireSender(ctx);
    return { settings: await currentSettings(dbOf(ctx), ctx.orgId, sender.id) };
  },
});
