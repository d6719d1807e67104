/**
 * Background work (R-W1) and artifacts (R-W2): hand over a request that needs several steps, ask how it is
 * going, cancel it; and store a draft, summary or extracted data as an artifact. The steps themselves run
 * in src/work/work-runner.ts, each call through the same Guardian and AuthorizationGate as any turn.
 */
import { z } from 'zod';
import { Sessions } from '../src/confirmations/sessions';
import { defineTool } from '../src/tools/define-tool';
import { ClarificationNeeded } from '../src/tools/clarification';
import { ToolError } from '../src/tools/types';
import { ARTIFACT_BODY_MAX, ARTIFACT_MEDIA_TYPES, artifactsOfWork, writeArtifact } from '../src/work/artifacts';
import { workOfCallKey } from '../src/work/keys';
import { readContext } from '../src/work/step-context';
import { FINISHED, WorkStore, type WorkRow } from '../src/work/work-store';
import { fact } from './_describe';
import { dbOf, requireSender } from './_people';

/** Level that may see and cancel anyone's background work in the organisation (CEO/CFO). */
export const WORK_ADMIN_LEVEL = 6;

/** `start_work`: a request that needs several steps becomes background work with a goal and a budget. */
export const startWork = defineTool({
  name: 'start_work',
  description:
    'Run a request that needs SEVERAL steps (prepare a meeting, draft and share material) as background ' +
    'work: step by step, each call checked as usual, ONE report at the end. Single actions: call that tool. ' +
    'Optional limits: steps, USD, minutes.',
  triggerExamples: [
    '来週の定例の準備をしておいて',
    '新人研修の資料を下書きして担当を割り振っておいて',
    '展示会の準備、調べてまとめてから共有しておいて',
    'Prepare the kickoff: draft an agenda and share it',
  ],
  effects: ['db.work_create'],
  effectKind: 'start',
  risk: 'none',
  requiredLevel: 2,
  paramRoles: { goal: 'text' },
  input: z.object({
    goal: z.string().trim().min(1).max(1000).describe('In the person’s words.'),
    plan: z.array(z.string().trim().min(1).max(300)).max(10).default([]).describe('Short steps in order.'),
    max_steps: z.number().int().min(1).max(50).optional(),
    max_cost_usd: z.number().min(0.01).max(100).optional(),
    max_minutes: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 60)
      .optional(),
  }),
  output: z.object({
    workId: z.string(),
    goal: z.string(),
    started: z.boolean(),
    note: z.string(),
  }),
  async describe(input, ctx) {
    return {
      summary: ctx.lang === 'en' ? 'Start background work.' : 'バックグラウンドで作業を始めます。',
      done: ctx.lang === 'en' ? 'Started background work.' : 'バックグラウンドで作業を始めました。',
      facts: [
        fact(ctx, 'goal', { ja: '目的', en: 'Goal' }, input.goal),
        ...(input.plan.length > 0 ? [fact(ctx, 'plan', { ja: '手順', en: 'Plan' }, input.plan.join(' → '))] : []),
      ],
    };
  },
  async handler(input, ctx) {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    if (workOfCallKey(ctx.idempotencyKey)) {
      throw new ToolError('Background work cannot start more background work; do the step here.', 'NESTED_WORK');
    }
    const account = await db.platformAccount.findFirst({
      where: { orgId: ctx.orgId, memberId: sender.id, platform: ctx.platform },
      select: { accountId: true },
    });
    if (!account) throw new ToolError('The sender has no account on this platform; cannot report back.', 'NO_ACCOUNT');
    const res = await new WorkStore(db).create({
      orgId: ctx.orgId,
      requesterMemberId: sender.id,
      platform: ctx.platform,
      roomId: ctx.roomId,
      accountId: account.accountId,
      goal: input.goal,
      plan: input.plan,
      maxSteps: input.max_steps,
      maxCostUsd: input.max_cost_usd,
      maxMinutes: input.max_minutes,
      originKey: ctx.idempotencyKey,
    });
    return {
      workId: res.id,
      goal: input.goal,
      started: res.created,
      note: 'Runs in the background; the person gets one report in this room when it is done. Tell them so.',
    };
  },
});

const workOut = z.object({
  workId: z.string(),
  goal: z.string(),
  status: z.string(),
  stepsDone: z.number(),
  maxSteps: z.number().nullable(),
  lastResult: z.string().nullable(),
  stoppedBecause: z.string().nullable(),
  artifacts: z.array(z.object({ artifactId: z.string(), title: z.string() })),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
});

async function describeWork(db: ReturnType<typeof dbOf>, w: WorkRow): Promise<z.input<typeof workOut>> {
  const ctx = readContext(w.stepContext);
  const artifacts = await artifactsOfWork(db, w.id);
  return {
    workId: w.id,
    goal: w.goal,
    status: w.status,
    stepsDone: w.stepsDone,
    maxSteps: w.maxSteps,
    lastResult: ctx.last_result,
    stoppedBecause: w.reasonCode ? `${w.reasonCode}${w.reason ? `: ${w.reason}` : ''}` : null,
    artifacts: artifacts.map((a) => ({ artifactId: a.id, title: a.title })),
    startedAt: w.createdAt.toISOString(),
    finishedAt: w.finishedAt?.toISOString() ?? null,
  };
}

/** Work the sender may touch that matches `ref` (an id, or words of the goal); admins see everyone's. */
async function findWork(
  ctx: Parameters<typeof dbOf>[0] & { orgId: string },
  ref: string | undefined,
  opts: { unfinishedOnly: boolean },
): Promise<WorkRow[]> {
  const sender = requireSender(ctx);
  const db = dbOf(ctx);
  const admin = sender.level >= WORK_ADMIN_LEVEL;
  const rows = (await db.backgroundWork.findMany({
    where: {
      orgId: ctx.orgId,
      ...(admin && ref ? {} : { requesterMemberId: sender.id }),
      ...(opts.unfinishedOnly ? { status: { notIn: [...FINISHED] } } : {}),
    },
    orderBy: { createdAt: 'desc' },
    take: 50,
  })) as WorkRow[];
  if (!ref) return rows;
  const r = ref.trim();
  const byId = rows.filter((w) => w.id === r);
  if (byId.length > 0) return byId;
  return rows.filter((w) => w.goal.includes(r) || r.includes(w.goal));
}

/** `work_status`: how the sender's background work is going (「頼んでおいた定例準備の作業、どこまで進んだ？」). */
export const workStatus = defineTool({
  name: 'work_status',
  description:
    'Status of background work the sender asked YOU to do (start_work): state, steps done, last result, why it ' +
    'stopped, artifacts. `work` picks one; omit for the latest. Not for tasks, goals or a vague 「あれ」.',
  triggerExamples: [
    '頼んでおいた定例準備の作業、どこまで進んだ？',
    'お願いしてた作業の進み具合は？',
    'How far along is the work I asked for?',
  ],
  effects: [],
  risk: 'none',
  requiredLevel: 1,
  input: z.object({
    work: z.string().trim().min(1).max(300).optional().describe('Work id, or words from its goal.'),
  }),
  output: z.object({ works: z.array(workOut) }),
  async handler(input, ctx) {
    const db = dbOf(ctx);
    let rows = await findWork(ctx, input.work, { unfinishedOnly: false });
    // Words that match no goal: the latest work is what people usually mean.
    if (rows.length === 0 && input.work) rows = await findWork(ctx, undefined, { unfinishedOnly: false });
    const works = [];
    for (const w of rows.slice(0, 5)) works.push(await describeWork(db, w));
    return { works };
  },
});

/** `cancel_work`: stops background work (the requester's own; level 6 any in the organisation). */
export const cancelWork = defineTool({
  name: 'cancel_work',
  description:
    'Cancel the sender’s unfinished background work (`work`: id or words of its goal; omit when only one is ' +
    'unfinished). Only the requester or an executive may.',
  triggerExamples: [
    '頼んでおいた定例準備の作業はもうやめて',
    'さっき頼んだ作業キャンセルして',
    'Stop the background work',
  ],
  effects: ['db.work_update'],
  effectKind: 'cancel',
  risk: 'none',
  requiredLevel: 1,
  input: z.object({
    work: z.string().trim().min(1).max(300).optional().describe('Work id, or words from its goal.'),
  }),
  output: z.object({
    workId: z.string(),
    goal: z.string(),
    result: z.enum(['cancelled', 'already_finished']),
  }),
  async handler(input, ctx) {
    const sender = requireSender(ctx);
    const rows = await findWork(ctx, input.work, { unfinishedOnly: true });
    if (rows.length === 0) {
      throw new ToolError('No unfinished background work of this person matches; nothing was cancelled.', 'NOT_FOUND');
    }
    if (rows.length > 1) {
      throw new ClarificationNeeded(
        'どの作業を止めますか？',
        rows.slice(0, 5).map((w) => w.goal.slice(0, 60)),
        'Which work should I stop?',
      );
    }
    const w = rows[0]!;
    const res = await new WorkStore(dbOf(ctx)).cancel(w.id, sender.id);
    if (res === 'cancelled' && w.pendingActionId) await dropAwaitedQuestion(dbOf(ctx), w, w.pendingActionId);
    return {
      workId: w.id,
      goal: w.goal,
      result: res === 'cancelled' ? ('cancelled' as const) : ('already_finished' as const),
    };
  },
});

/**
 * The question a cancelled work was waiting on is withdrawn (through src/confirmations/pending-actions.ts, the writer
 * of pending actions), so a later 「はい」 runs nothing for work that no longer exists. Only while it is still the
 * requester's open question in that room.
 */
async function dropAwaitedQuestion(db: ReturnType<typeof dbOf>, w: WorkRow, pendingActionId: string): Promise<void> {
  const key = { platform: w.platform, roomId: w.roomId, accountId: w.accountId };
  const states = new Sessions(db);
  const session = await states.getSession(key);
  if (session.pending?.id === pendingActionId) await states.pending.cancel(key, 'background work cancelled');
}

/** `save_artifact`: stores a draft, summary or extracted data (referenced by id in reports). */
export const saveArtifact = defineTool({
  name: 'save_artifact',
  description:
    'Store a draft, summary or extracted data as an artifact and get its id (in background work it is shown in ' +
    'the report). Full text in `body`, not in replies.',
  triggerExamples: ['定例のアジェンダを下書きとして保存して', '議事録の要約を保存しておいて'],
  effects: ['db.artifact_write'],
  effectKind: 'save',
  risk: 'none',
  requiredLevel: 2,
  paramRoles: { title: 'text', body: 'text' },
  input: z.object({
    title: z.string().trim().min(1).max(200),
    body: z.string().min(1).max(ARTIFACT_BODY_MAX),
    media_type: z.enum(ARTIFACT_MEDIA_TYPES).default('text/markdown'),
    metadata: z.record(z.string(), z.union([z.string().max(500), z.number(), z.boolean()])).optional(),
  }),
  output: z.object({
    artifactId: z.string(),
    title: z.string(),
    mediaType: z.string(),
    chars: z.number(),
    created: z.boolean(),
  }),
  async handler(input, ctx) {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const workId = workOfCallKey(ctx.idempotencyKey);
    const work = workId ? await db.backgroundWork.findUnique({ where: { id: workId } }) : null;
    if (input.media_type === 'application/json') {
      try {
        JSON.parse(input.body);
      } catch {
        throw new ToolError('media_type application/json needs a JSON body.', 'INVALID_JSON');
      }
    }
    const { artifact, created } = await writeArtifact(db, {
      orgId: ctx.orgId,
      ownerMemberId: work?.requesterMemberId ?? sender.id,
      backgroundWorkId: work?.id ?? null,
      title: input.title,
      mediaType: input.media_type,
      body: input.body,
      metadata: input.metadata,
      idempotencyKey: ctx.idempotencyKey || null,
    });
    return {
      artifactId: artifact.id,
      title: artifact.title,
      mediaType: artifact.mediaType,
      chars: artifact.body.length,
      created,
    };
  },
});
