import type { ReplyOption } from '../adapters/types';
import type { AuthDecision } from '../authorization';
import type { PromptSet } from '../brain/prompts';
import type { Language } from '../core/language';
import { personaMessage } from '../core/messages';
import type { ToolProposal } from '../core/proposal';
import type { ToolMeta } from '../core/tool-meta';
import type { GuardianVerdict } from '../guardian';
import { buttonKey } from '../state/button-key';
import type { PendingActionView, StoredProposal } from '../state/types';
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
