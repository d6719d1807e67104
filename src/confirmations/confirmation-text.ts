import type { ReplyOption } from '../core/chat';
import type { AuthDecision } from '../authorization';
import type { PromptSet } from '../brain/prompts';
import type { Language } from '../core/language';
import { personaMessage } from '../core/messages';
import type { ToolProposal } from '../core/proposal';
import type { ToolMeta } from '../core/tool-meta';
import type { GuardianVerdict } from '../guardian';
import { buttonKey, formKey } from './button-key';
import type { PendingActionView, StoredProposal } from './types';
import { diffEffects, genericEffect, isEffectDescription, renderEffect } from '../tools/describe';
import type { EffectDescription } from '../tools/types';

/** 「3人に送ります」「全員に送ります」「5件を削除します」 from the tool's declared parameter roles. */
export function effectNote(proposal: ToolProposal, tool: ToolMeta | undefined, lang: Language = 'ja'): string {
  const notes: string[] = [];
  const all = (x: unknown) => typeof x === 'string' && /^(all|全員|みんな|everyone)$/i.test(x.trim());
  for (const [name, role] of Object.entries(tool?.paramRoles ?? {})) {
    const v = proposal.parameters[name];
    if (role === 'recipients') {
      const n = Array.isArray(v) ? new Set(v.map(String)).size : 0;
      if (all(v) || (Array.isArray(v) && v.some(all))) {
        notes.push(lang === 'en' ? 'it goes to everyone in the room' : 'ルームの全員に送ります');
      } else if (Array.isArray(v)) notes.push(lang === 'en' ? `it goes to ${n} people` : `${n}人に送ります`);
    }
    if (role === 'deletion' && Array.isArray(v)) {
      notes.push(lang === 'en' ? `${v.length} item(s) will be deleted` : `${v.length}件を削除します`);
    }
  }
  return notes.join(lang === 'en' ? '; ' : '／');
}

/**
 * Button keys for a pending action (Discord/console), bound to the confirmation round whose question
 * shows them; text answers "1"/"2" work everywhere.
 */
export function confirmationOptions(p: PromptSet, lang: Language, pendingId: string, round = 0): ReplyOption[] {
  return [
    {
      answer: '1',
      label: personaMessage(p, 'confirm.yes', lang),
      key: buttonKey(pendingId, 'approve', round),
      style: 'primary',
      edit: { key: formKey(pendingId, round), label: personaMessage(p, 'confirm.edit', lang) },
    },
    {
      answer: '2',
      label: personaMessage(p, 'confirm.no', lang),
      key: buttonKey(pendingId, 'deny', round),
      style: 'secondary',
    },
  ];
}

/** What a stored pending action will do: the effect it was confirmed with, or (older rows) its summary. */
export function pendingEffect(pending: Pick<PendingActionView, 'proposal'>, lang: Language): EffectDescription {
  const { effect, summary, toolName, parameters } = pending.proposal;
  if (isEffectDescription(effect)) return effect;
  return typeof summary === 'string' ? { summary, facts: [] } : genericEffect(toolName, parameters, lang);
}

/**
 * What an action that ran did, in the past tense (「…タスクを作成しました。」); a row stored before effects had one
 * quotes what was asked instead of saying it in the future tense.
 */
export function doneSummary(effect: EffectDescription, lang: Language): string {
  if (effect.done) return effect.done;
  return lang === 'en' ? `what was asked ("${effect.summary}")` : `ご依頼の件（${effect.summary.replace(/。$/, '')}）`;
}

/** What a confirmation question is built from. */
export interface QuestionInput {
  proposal: ToolProposal;
  tool: ToolMeta | undefined;
  /** The call's effect from its checked parameters (the tool's `describe`). */
  effect: EffectDescription;
  verdict: Pick<GuardianVerdict, 'action' | 'userNoteJa'>;
  auth: Pick<AuthDecision, 'noteJa' | 'noteEn'>;
  /** The pending action this call changes: shown as a diff. */
  modifying?: PendingActionView;
  lang: Language;
}

/** The question, and what the pending action keeps to ask again (notes in both languages). */
export interface Question {
  text: string;
  title: string;
  /** The proposal as stored with the pending action (its effect, the model's summary, the notes). */
  stored: StoredProposal;
}

/**
 * 「実行してよいウル？」: the effect stated from the checked parameters (never only the model's summary,
 * which may follow), the diff against the action it changes, and the Guardian's and the Gate's notes.
 */
export function confirmationQuestion(p: PromptSet, q: QuestionInput): Question {
  const { proposal, effect, lang } = q;
  const noteJa = [q.verdict.userNoteJa, q.auth.noteJa, effectNote(proposal, q.tool, 'ja')].filter(Boolean).join('／');
  const noteEn = [q.auth.noteEn, effectNote(proposal, q.tool, 'en')].filter(Boolean).join('; ');
  const note = lang === 'ja' ? (noteJa ? `（${noteJa}）\n` : '') : noteEn ? `(Note: ${noteEn}.)\n` : '';
  const parts = [renderEffect(effect)];
  if (q.modifying) {
    const before = pendingEffect(q.modifying, lang);
    const diff =
      q.modifying.proposal.toolName === proposal.toolName
        ? diffEffects(before, effect, lang)
        : [`${before.summary} → ${effect.summary}`];
    const key = diff.length > 0 ? 'confirm.changes' : 'confirm.no_changes';
    parts.push(personaMessage(p, key, lang, { lines: diff.join('\n') }));
  }
  const modelSummary = proposal.summary?.trim();
  if (modelSummary && modelSummary !== effect.summary) {
    parts.push(personaMessage(p, 'confirm.model_summary', lang, { text: modelSummary }));
  }
  const stored: StoredProposal = {
    ...proposal,
    summary: effect.summary,
    effect,
    modelSummary: modelSummary ?? null,
    guardianNote: noteJa || null,
    guardianNoteEn: noteEn || null,
  };
  return {
    text: personaMessage(p, 'confirm.question', lang, { summary: parts.join('\n'), note }),
    title: personaMessage(p, 'confirm.title', lang),
    stored,
  };
}

/** 「さっきの確認がまだ…」: the pending question again. */
export function reminderText(p: PromptSet, pending: PendingActionView, lang: Language): string {
  return personaMessage(p, 'confirm.reminder', lang, { summary: renderEffect(pendingEffect(pending, lang)) });
}

/** 「念のため、もう一度確認するウル」 with the effect and the notes restated. */
export function secondQuestionText(p: PromptSet, pending: PendingActionView, lang: Language): string {
  const ja = pending.proposal.guardianNote;
  const en = pending.proposal.guardianNoteEn;
  const jaNote = typeof ja === 'string' ? `（${ja}）\n` : '';
  const note = lang === 'ja' ? jaNote : typeof en === 'string' ? `(Note: ${en}.)\n` : '';
  const summary = renderEffect(pendingEffect(pending, lang));
  return personaMessage(p, 'confirm.second', lang, { summary, note });
}

/** Where a confirmation stands for an answer that arrives now (a click or a 「はい」). */
export type AnswerState = 'open' | 'in_progress' | 'next_round' | 'executed' | 'cancelled' | 'expired' | 'failed';

/**
 * Where `action` stands for an answer to its round `round` (a button names it; a text answer answers the
 * current round): still open, or decided — and how. The one reading of a pending action's status that
 * every late answer and every closed question uses.
 */
export function answerState(
  action: Pick<PendingActionView, 'status' | 'expiresAt' | 'confirmationsGiven'>,
  now: Date,
  round?: number,
): AnswerState {
  switch (action.status) {
    case 'executed':
    case 'cancelled':
    case 'expired':
    case 'failed':
      return action.status;
    case 'approved':
      return 'in_progress';
    case 'pending':
      if (action.expiresAt.getTime() <= now.getTime()) return 'expired';
      return round !== undefined && round < action.confirmationsGiven ? 'next_round' : 'open';
  }
}

/**
 * The truth told to an answer that came after its confirmation was decided: 「もう実行済みです: …」 with
 * when and what it made, 「取り消し済みです」, the expiry note, … — never "expired, ask again" for an action
 * that ran (which would invite a duplicate).
 */
export function decidedAnswerText(
  p: PromptSet,
  action: PendingActionView,
  state: Exclude<AnswerState, 'open'>,
  lang: Language,
  timezone = 'Asia/Tokyo',
): string {
  switch (state) {
    case 'executed': {
      const at = action.executedAt ?? action.decidedAt;
      const when = at
        ? new Intl.DateTimeFormat(lang === 'en' ? 'en-GB' : 'ja-JP', {
            timeZone: timezone,
            hour: '2-digit',
            minute: '2-digit',
          }).format(at)
        : '';
      const made = resultTitle(action.result);
      const result = made ? (lang === 'en' ? `: "${made}"` : `、『${made}』`) : '';
      // The sentence continues with when it ran: 「…作成しました（10:05に実行）。」.
      const summary = doneSummary(pendingEffect(action, lang), lang).replace(/[。.]$/, '');
      return personaMessage(p, 'confirm.done_already', lang, {
        summary,
        when: lang === 'en' ? `at ${when}` : when,
        result,
      });
    }
    case 'cancelled':
      return personaMessage(p, 'confirm.cancelled_already', lang);
    case 'expired':
      return personaMessage(p, 'confirm.expired', lang);
    case 'failed':
      return personaMessage(p, 'confirm.failed_already', lang);
    case 'next_round':
      return personaMessage(p, 'confirm.answer_next', lang);
    case 'in_progress':
      return personaMessage(p, 'confirm.already', lang);
  }
}

/** The line a decided question gets where its buttons were (「✅ 実行済み」…); null while it is open. */
export function closedQuestionNote(p: PromptSet, state: AnswerState, lang: Language): string | null {
  if (state === 'open' || state === 'in_progress') return null;
  const key = state === 'next_round' ? 'confirm.closed_next' : (`confirm.closed_${state}` as const);
  return personaMessage(p, key, lang);
}

/**
 * The title of what an executed action made (a task's, a reminder's text…), when its result names one, at its top
 * or one level down (`{ schedule: { text } }`).
 */
function resultTitle(result: unknown, depth = 0): string | null {
  if (!result || typeof result !== 'object') return null;
  const r = result as Record<string, unknown>;
  for (const k of ['title', 'text', 'message']) {
    const v = r[k];
    if (typeof v === 'string' && v.trim()) return v.trim().slice(0, 80);
  }
  if (depth > 0) return null;
  for (const v of Object.values(r)) {
    const inner = Array.isArray(v) ? null : resultTitle(v, depth + 1);
    if (inner) return inner;
  }
  return null;
}
