import type { ErrorCode } from './app-error';
import type { Language } from './language';

/**
 * Persona message keys (prompts/messages.<persona>.json): every text the bot says without the model.
 * Each persona file has every key in both languages (a test keeps them equal); `error.<code>` exists for
 * every {@link ErrorCode}.
 */
export const MESSAGE_KEYS = [
  'bot.names',
  'clarify.ended',
  'clarify.restart',
  'confirm.already',
  'confirm.answer_next',
  'confirm.cancelled',
  'confirm.cancelled_already',
  'confirm.changes',
  'confirm.closed_cancelled',
  'confirm.closed_executed',
  'confirm.closed_expired',
  'confirm.closed_failed',
  'confirm.closed_next',
  'confirm.denied_now',
  'confirm.done_already',
  'confirm.edit',
  'confirm.edit_blocked',
  'confirm.edit_denied',
  'confirm.edit_nothing',
  'confirm.edit_number',
  'confirm.edit_required',
  'confirm.edit_submitted',
  'confirm.edit_title',
  'confirm.edit_unchanged',
  'confirm.executed',
  'confirm.expired',
  'confirm.failed',
  'confirm.failed_already',
  'confirm.model_summary',
  'confirm.modify_hint',
  'confirm.no',
  'confirm.no_changes',
  'confirm.not_yours',
  'confirm.question',
  'confirm.reminder',
  'confirm.second',
  'confirm.title',
  'confirm.urgent_cancelled',
  'confirm.yes',
  'console.no_llm',
  'guardian.blocked',
  'guardian.unsure',
  'notice.admin_alert_fallback',
  'notice.admin_alert_task',
  'notice.daily_digest_fallback',
  'notice.daily_digest_task',
  'notice.deadline_reminder_fallback',
  'notice.deadline_reminder_task',
  'notice.goal_checkin_fallback',
  'notice.goal_checkin_task',
  'notice.reminder_fallback',
  'notice.reminder_task',
  'notice.task_due_changed_fallback',
  'notice.task_due_changed_task',
  'reply.blocked_confidential',
  'reply.degraded_db',
  'reply.maybe_undelivered',
  'reply.not_done',
  'reply.not_done_blocked',
  'reply.not_done_denied',
  'reply.not_done_failed',
  'reply.not_done_unknown',
  'reply.not_done_waiting',
  'reply.sender_budget_day',
  'reply.sender_budget_minute',
  'reply.stranger',
  'work.artifact_ref',
  'work.report_fallback',
  'work.report_task',
  'work.step_task',
  'work.stopped_fallback',
  'work.why_budget',
  'work.why_declined',
  'work.why_error',
  'work.why_step_failed',
] as const;

/** A persona message key. */
export type MessageKey = (typeof MESSAGE_KEYS)[number] | `error.${ErrorCode}`;

/** The persona's messages by language (part of brain/prompts.ts `PromptSet`). */
export interface PersonaMessages {
  messages: Record<Language, Record<string, string>>;
}

/** Fills `{{name}}` placeholders. */
export function fill(template: string, vars: Record<string, string | number | undefined> = {}): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(vars[k] ?? ''));
}

/** The names people address the bot by in the persona (「Hisho」, 「秘書」 …), for stripping the addressee. */
export function personaNames(p: PersonaMessages): string[] {
  return personaMessage(p, 'bot.names', 'ja').split(',');
}

/** A persona message by key and language (falls back to Japanese, then to the INTERNAL error message). */
export function personaMessage(
  p: PersonaMessages,
  key: MessageKey,
  lang: Language,
  vars?: Record<string, string | number | undefined>,
): string {
  const t =
    p.messages[lang]?.[key] ??
    p.messages.ja[key] ??
    p.messages[lang]?.['error.INTERNAL'] ??
    p.messages.ja['error.INTERNAL'] ??
    '';
  return fill(t, vars);
}
