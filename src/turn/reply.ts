import { BrainFailure, type Brain } from '../brain/brain';
import { rejectedAnswerContinuation } from '../brain/continuation';
import type { PromptSet } from '../brain/prompts';
import type { LlmCallRecord } from '../core/llm-usage';
import type { Language } from '../core/language';
import { fill, personaMessage, type MessageKey } from '../core/messages';
import type { EffectKind, ToolMeta } from '../core/tool-meta';
import type { TurnContext } from '../context/types';
import {
  callKind,
  checkBrainOutputMeta,
  checkReplyClaims,
  checkReplyText,
  collectStrings,
  type GuardianConfig,
} from '../guardian';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { DECISION_LABELS, numberedOptions, type CallExecution, type TurnDecision } from './turn-decision';

export interface ReplyComposerDeps {
  prompts: PromptSet;
  guardianConfig: GuardianConfig;
  /** Writes a reply again when it claimed something that did not happen (R-C4: through the brain). */
  brain: Pick<Brain, 'decide'>;
  /** The tools' declarations: their effect kinds and effects. */
  tools: { meta(name: string): Pick<ToolMeta, 'effectKind' | 'effects'> | undefined };
  metrics: Pick<Metrics, 'replyClaimCorrections'>;
  logger: Logger;
}

/**
 * Reply composition (R-C4): every text a person reads passes the Guardian's reply check here, once. A
 * blocked reply becomes the persona's 「お答えできない」 message and the decision `blocked` (with the
 * check's verdict); otherwise the checked text (mention markup neutralised) and checked option labels.
 * Before that, {@link honest} keeps a reply the model wrote consistent with what the turn did.
 */
export class ReplyComposer {
  constructor(private readonly d: ReplyComposerDeps) {}

  compose(decision: TurnDecision, lang: Language): TurnDecision {
    if (decision.reply.own) return decision;
    const config = this.d.guardianConfig;
    const check = checkReplyText(decision.reply.text, config, this.quotedWorkItems(decision));
    if (check.action === 'BLOCK') {
      return {
        ...decision,
        kind: 'blocked',
        reasonCode: check.reasonCode,
        decider: 'SYSTEM',
        guardian: { action: 'BLOCK', reasonCode: check.reasonCode },
        reply: { text: personaMessage(this.d.prompts, 'reply.blocked_confidential', lang) },
        notes: { ...decision.notes, blockedReply: true },
      };
    }
    const options = decision.reply.options?.map((o) => {
      const label = checkReplyText(o.label, config);
      return { ...o, label: label.action === 'BLOCK' ? '—' : label.text };
    });
    return {
      ...decision,
      reply: { ...decision.reply, text: check.text, options },
      notes: { ...decision.notes, replyCheck: check.reasonCode },
    };
  }

  /**
   * The words of the work items this turn let through (a task, reminder or schedule the Guardian did not block,
   * or a confirmed one): a reply may say them back (「給与振込データの送信」), issue 40.
   */
  private quotedWorkItems(decision: TurnDecision): string[] {
    return (decision.proposals ?? []).flatMap((p) => {
      const tool = this.d.tools.meta(p.tool);
      if (!tool || callKind(tool) !== 'work_item') return [];
      if (!('pendingActionId' in p) && (p.guardian.action === 'BLOCK' || p.auth?.result === 'DENIED')) return [];
      return collectStrings(p.parameters);
    });
  }

  /**
   * Replies consistent with the turn (issue 29): a reply the model wrote may say something was done only
   * when a call with that effect ran successfully in this turn (the Guardian's claims check). Otherwise the
   * model writes it again from what really happened (refused, stopped, failed, waiting), and when it cannot
   * — or its new reply still claims — the persona's fixed text for that outcome is said. The correction is
   * recorded (`notes.claimCheck`, G_REPLY_UNSUPPORTED_CLAIM) and counted. Texts the model did not write
   * (persona messages, confirmation questions) pass unchanged.
   */
  async honest(decision: TurnDecision, ctx: TurnContext): Promise<TurnDecision> {
    const draft = decision.reply.written;
    if (!draft) return decision;
    const executed = executedKinds(decision, this.d.tools);
    const check = checkReplyClaims(decision.reply.text, executed, { endings: this.d.prompts.sentenceEndings });
    if (check.action === 'ALLOW') return decision;
    const outcome = turnOutcome(decision);
    const note = fill(this.d.prompts.guidance.rewrite_unsupported_claim ?? '', {
      claims: check.claims.map((c) => `「${c.text}」`).join(', '),
      facts: outcome.lines.join(' / '),
    });
    const continuation = rejectedAnswerContinuation(
      draft.continuation,
      { content: draft.content, text: decision.reply.text },
      note,
    );
    const calls: LlmCallRecord[] = [];
    let reply: TurnDecision['reply'] | null = null;
    let why = 'rewrite still claimed';
    try {
      // Written again by the model that wrote the draft: its thinking blocks are in the continuation.
      const route = decision.brain ? { model: decision.brain.model, cacheTtl: '5m' as const } : undefined;
      const again = await this.d.brain.decide({ ctx, tools: [], continuation, purpose: 'rewrite_claim', route });
      calls.push(...again.calls);
      const out = again.output;
      const meta = checkBrainOutputMeta(out.reasoning, out.confidence, this.d.guardianConfig);
      if (out.type === 'tool_call' || meta.action !== 'ALLOW')
        why = `rewrite unusable (${out.type}, ${meta.reasonCode})`;
      else {
        const text = out.type === 'text_response' ? out.text : out.question;
        if (checkReplyClaims(text, executed, { endings: this.d.prompts.sentenceEndings }).action === 'ALLOW')
          reply = out.type === 'text_response' ? { text } : { text, options: numberedOptions(out.options) };
      }
    } catch (err) {
      if (err instanceof BrainFailure) calls.push(...err.calls);
      why = `rewrite failed (${(err as Error).name})`;
    }
    const corrected = reply ? 'rewritten' : 'fallback';
    this.d.metrics.replyClaimCorrections.inc({ decision: DECISION_LABELS[decision.kind], outcome: corrected });
    this.d.logger.warn(
      {
        reasonCode: check.reasonCode,
        kinds: check.claims.flatMap((c) => c.kinds),
        corrected,
        ...(reply ? {} : { why }),
      },
      'reply claimed something the turn did not do: written again',
    );
    const claimCheck = { reasonCode: check.reasonCode, claims: check.claims.map((c) => c.text), corrected };
    return {
      ...decision,
      calls: [...decision.calls, ...calls],
      reply: reply ?? { text: personaMessage(this.d.prompts, outcome.fallback, ctx.language) },
      notes: { ...decision.notes, claimCheck },
    } as TurnDecision;
  }
}

/**
 * The effect kinds of the calls that ran successfully in this turn (a confirmed action: when it ran). A call whose
 * output names whom it notified (`notified`: change_task tells the task's giver) also sent a message.
 */
export function executedKinds(
  decision: TurnDecision,
  tools: { meta(name: string): Pick<ToolMeta, 'effectKind'> | undefined },
): Set<EffectKind> {
  const kinds = new Set<EffectKind>();
  for (const p of decision.proposals ?? []) {
    const ran = 'pendingActionId' in p ? decision.kind === 'executed' : p.execution?.status === 'ok';
    const kind = ran ? tools.meta(p.tool)?.effectKind : undefined;
    if (kind) kinds.add(kind);
    const output = ran && 'execution' in p ? (p.execution?.output as { notified?: unknown } | undefined) : undefined;
    if (typeof output?.notified === 'string' && output.notified) kinds.add('send_message');
  }
  return kinds;
}

/** What went wrong first decides the fallback text; later outcomes only add facts. */
type NotDone = 'denied' | 'blocked' | 'failed' | 'unknown' | 'waiting';
const FALLBACK_KEYS: Record<NotDone | 'nothing', MessageKey> = {
  denied: 'reply.not_done_denied',
  blocked: 'reply.not_done_blocked',
  failed: 'reply.not_done_failed',
  unknown: 'reply.not_done_unknown',
  waiting: 'reply.not_done_waiting',
  nothing: 'reply.not_done',
};

/**
 * What really happened to each call of the turn, for the model (English, internal), and the persona's
 * fixed text for the first thing that was not done.
 */
export function turnOutcome(decision: TurnDecision): { lines: string[]; fallback: MessageKey } {
  const lines: string[] = [];
  let first: NotDone | null = null;
  const say = (tool: string, what: string, why?: NotDone) => {
    lines.push(`${tool}: ${what}`);
    if (why && !first) first = why;
  };
  for (const p of decision.proposals ?? []) {
    if ('pendingActionId' in p) {
      const status = (decision.execution as Partial<CallExecution> | undefined)?.status;
      if (decision.kind === 'executed') say(p.tool, 'confirmed by the person and carried out successfully');
      else if (decision.kind === 'denied')
        say(p.tool, 'refused at execution: the person is no longer permitted; not done', 'denied');
      else if (status === 'clarify')
        say(p.tool, 'waiting for the person to answer a question; not done yet', 'waiting');
      else say(p.tool, 'confirmed, but it failed; not done', 'failed');
      continue;
    }
    const status = p.execution?.status;
    if (p.guardian.action === 'BLOCK')
      say(p.tool, `stopped by the safety rules (${p.guardian.reasonCode}); not done`, 'blocked');
    else if (p.unresolved)
      say(
        p.tool,
        'not done: a name fits no member or department; the person is asked who or which is meant',
        'unknown',
      );
    else if (p.auth?.result === 'DENIED')
      say(p.tool, `refused: the person is not permitted (${p.auth.reasonCode}); not done`, 'denied');
    else if (status === 'ok') say(p.tool, 'carried out successfully');
    else if (status === 'error' || status === 'internal_error') say(p.tool, 'failed; not done', 'failed');
    else if (status === 'clarify') say(p.tool, 'waiting for the person to answer a question; not done yet', 'waiting');
    else if (status === 'shadow') say(p.tool, 'trial run only (shadow mode); not done');
    else say(p.tool, "waiting for the person's confirmation; not done yet", 'waiting');
  }
  if (lines.length === 0) lines.push('no action was carried out in this turn (no tool ran)');
  return { lines, fallback: FALLBACK_KEYS[first ?? 'nothing'] };
}
