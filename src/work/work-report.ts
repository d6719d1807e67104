import type { Platform } from '../core/chat';
import type { PromptSet } from '../brain/prompts';
import { detectLanguage } from '../core/language';
import { personaMessage, type MessageKey } from '../core/messages';
import type { Db } from '../db/prisma';
import type { ClaimedItem } from '../queue/work-queue';
import { memberAsReader, type NoticeDelivery } from '../notices/notice-delivery';
import { ARTIFACT_INLINE_MAX, artifactsOfWork, type ArtifactView } from './artifacts';
import { readContext } from './step-context';
import { WORK_REPORT_KIND, type WorkStore } from './work-store';

export interface WorkReporterDeps {
  db: Db;
  store: Pick<WorkStore, 'get'>;
  delivery: Pick<NoticeDelivery, 'deliver'>;
  prompts: PromptSet;
}

/** Where an artifact can be read when it is too long for the report (the read-only admin API). */
export function artifactLink(id: string): string {
  return `/admin/api/artifacts/${id}`;
}

/** How a report shows an artifact: its text where short, otherwise the link. */
function whereToSee(a: ArtifactView): string {
  const one = a.body.replace(/\s+/g, ' ').trim();
  return one.length <= ARTIFACT_INLINE_MAX ? one : artifactLink(a.id);
}

const WHY: Record<string, MessageKey> = {
  BUDGET_EXCEEDED: 'work.why_budget',
  W_STEP_FAILED: 'work.why_step_failed',
  W_CONFIRMATION_DECLINED: 'work.why_declined',
  W_ERROR: 'work.why_error',
  W_ABANDONED: 'work.why_error',
};

/**
 * The one report of finished background work (R-W2): a `notification` item (kind `work_report`, enqueued
 * with the work's end in one statement), written by the brain from the work's facts — outcome, artifact
 * titles with their text or link — checked by the Guardian and sent once through the notice delivery,
 * mentioning the requester in the origin room.
 */
export class WorkReporter {
  constructor(private readonly d: WorkReporterDeps) {}

  async handle(item: ClaimedItem): Promise<void> {
    const p = item.payload as { kind?: string; workId?: string };
    if (p.kind !== WORK_REPORT_KIND || !p.workId) return;
    const w = await this.d.store.get(p.workId);
    if (!w) return;
    const member = await this.d.db.member.findUnique({
      where: { orgId_id: { orgId: w.orgId, id: w.requesterMemberId } },
    });
    if (!member || !member.active) return;
    const lang = detectLanguage(w.goal);
    const ctx = readContext(w.stepContext);
    const artifacts = await artifactsOfWork(this.d.db, w.id);
    const done = w.status === 'done';
    const lines = [
      `目的: ${w.goal}`,
      done ? '結果: 完了' : `結果: 途中で停止 (${w.reasonCode ?? 'unknown'}${w.reason ? `: ${w.reason}` : ''})`,
      `ステップ数: ${w.stepsDone}`,
      ...(ctx.last_result ? [`最後の結果: ${ctx.last_result}`] : []),
      ...ctx.facts.map((f) => `事実: ${f}`),
      ...artifacts.map((a) => `資料: 「${a.title}」 見る方法: ${whereToSee(a)}`),
    ];
    const refs = artifacts
      .map((a) => personaMessage(this.d.prompts, 'work.artifact_ref', lang, { title: a.title, where: whereToSee(a) }))
      .join('');
    const vars = { name: member.name, goal: w.goal, artifacts: refs };
    const whyKey = w.reasonCode ? WHY[w.reasonCode] : undefined;
    const fallback = done
      ? personaMessage(this.d.prompts, 'work.report_fallback', lang, vars)
      : personaMessage(this.d.prompts, 'work.stopped_fallback', lang, {
          ...vars,
          why: personaMessage(this.d.prompts, whyKey ?? 'work.why_step_failed', lang),
        });
    await this.d.delivery.deliver({
      kind: WORK_REPORT_KIND,
      orgId: w.orgId,
      platform: w.platform as Platform,
      roomId: w.roomId,
      accountId: w.accountId,
      memberId: member.id,
      reader: memberAsReader(member),
      instruction: personaMessage(this.d.prompts, 'work.report_task', lang, { name: member.name }),
      facts: { title: 'バックグラウンド作業の結果', lines },
      fallback,
      outboxKey: `notice:work:${w.id}`,
      mentionAccountIds: [w.accountId],
      reasonCode: w.reasonCode ?? 'W_DONE',
      workItemId: item.id,
    });
  }
}
