import { z } from 'zod';
import type { InboundMessage, Platform, ReplyInteraction } from '../core/chat';
import type { PromptSet } from '../brain/prompts';
import { detectLanguage } from '../core/language';
import { personaMessage } from '../core/messages';
import type { Logger } from '../observability/logger';
import type { ToolRegistry } from '../tools/registry';
import { isEffectDescription } from '../tools/describe';
import { parseFormKey } from './button-key';
import { answerState, decidedAnswerText } from './confirmation-text';
import type { PendingActions } from './pending-actions';
import type { PendingActionView } from './types';

/** One field of the form: a parameter of the pending call, with today's value. */
export interface FormField {
  /** The parameter's name (the text input's custom id). */
  id: string;
  label: string;
  value: string;
  required: boolean;
  /** The tool's schema's limit for it (capped at Discord's 4 000). */
  maxLength: number;
  /** A long text (several lines). */
  long: boolean;
  /** A hint from the tool's schema (≤ 100 characters). */
  placeholder?: string;
  number: boolean;
}

/** The form for a pending action: its title and fields. */
export interface EditForm {
  title: string;
  fields: FormField[];
}

/** Who opened or submitted the form, where. */
export interface FormRequest {
  platform: Platform;
  roomId: string;
  accountId: string;
  senderName?: string;
  /** The form's key (`hf:<pending id>_<round>`, button-key.ts). */
  key: string;
  /** The platform's id of this interaction (a submission's dedupe key). */
  interactionId: string;
}

/** What became of opening the form: the form, or a note for the person only (why it cannot be changed). */
export type FormOpening =
  { status: 'form'; form: EditForm } | { status: 'decided' | 'not_yours' | 'expired' | 'invalid'; note?: string };

/** What became of a submission: taken as a change request, or a note for the person only. */
export interface FormOutcome {
  status: 'accepted' | 'decided' | 'not_yours' | 'expired' | 'invalid' | 'unchanged';
  note?: string;
}

/** Discord's limits: 5 rows of one text input, 4 000 characters, a 45-character label. */
const MAX_FIELDS = 5;
const MAX_LENGTH = 4000;
const MAX_LABEL = 45;

interface JsonProperty {
  type?: string | string[];
  maxLength?: number;
  description?: string;
}

/**
 * The parameters a person may change in a form, from the tool's own input schema: its top-level string and number
 * parameters that the question showed (at most five, in the schema's order), each with the pending call's value and
 * the question's label for it. A tool without such parameters has no form.
 */
export function editableFields(registry: ToolRegistry, pending: PendingActionView): FormField[] {
  const tool = registry.get(pending.proposal.toolName);
  if (!tool) return [];
  const schema = z.toJSONSchema(tool.input, { target: 'draft-2020-12', io: 'input' }) as {
    properties?: Record<string, JsonProperty>;
    required?: string[];
  };
  const effect = pending.proposal.effect;
  const labels = new Map(isEffectDescription(effect) ? effect.facts.map((f) => [f.key, f.label]) : []);
  const values = pending.proposal.parameters;
  const fields: FormField[] = [];
  for (const [id, p] of Object.entries(schema.properties ?? {})) {
    const type = Array.isArray(p.type) ? p.type.find((t) => t !== 'null') : p.type;
    if (type !== 'string' && type !== 'number' && type !== 'integer') continue;
    const value = values[id];
    const label = labels.get(id);
    // Only what the question showed (its facts name each value in the person's language).
    if (label === undefined) continue;
    const maxLength = Math.min(p.maxLength ?? MAX_LENGTH, MAX_LENGTH);
    fields.push({
      id,
      label: label.slice(0, MAX_LABEL),
      value: typeof value === 'string' || typeof value === 'number' ? String(value) : '',
      required: schema.required?.includes(id) ?? false,
      maxLength,
      long: maxLength > 200 && type === 'string',
      ...(p.description ? { placeholder: p.description.slice(0, 100) } : {}),
      number: type !== 'string',
    });
    if (fields.length === MAX_FIELDS) break;
  }
  return fields;
}

/**
 * Discord's 「変更する」 (issue 44): opening the form of a pending action — only for the person it asked, only while
 * it is open — and taking a submission in as that person's change request: the same intake and the same turn as a
 * typed 「期限は金曜にして」 (confirmation-flow.ts: the action is set aside, the changed call goes through the Guardian
 * and the AuthorizationGate again and is asked again with the diff). The values are the call's, as the person wrote
 * them; nothing here decides whether they are allowed.
 */
export function createEditForms(deps: {
  pending: Pick<PendingActions, 'find'>;
  registry: ToolRegistry;
  intake: { accept(msg: InboundMessage): Promise<{ status: 'accepted' | 'duplicate' }> };
  prompts: PromptSet;
  logger: Logger;
  timezone?: string;
  now?: () => Date;
}): {
  open(r: FormRequest): Promise<FormOpening>;
  submit(r: FormRequest & { values: Record<string, string>; replyVia?: ReplyInteraction }): Promise<FormOutcome>;
} {
  const now = () => deps.now?.() ?? new Date();
  const say = (key: Parameters<typeof personaMessage>[1], p: PendingActionView, vars?: Record<string, string>) =>
    personaMessage(deps.prompts, key, detectLanguage(p.question), vars);

  /** The pending action the form is for, when it is this person's and still open; else what to tell them. */
  const openAction = async (r: FormRequest): Promise<{ pending: PendingActionView; round: number } | FormOutcome> => {
    const parsed = parseFormKey(r.key);
    const pending = parsed ? await deps.pending.find(parsed.pendingId) : null;
    if (!parsed || !pending) {
      deps.logger.warn({ platform: r.platform }, 'forged or stale form key');
      return { status: 'invalid' };
    }
    const k = pending.key;
    if (k.platform !== r.platform || k.roomId !== r.roomId || k.accountId !== r.accountId)
      return { status: 'not_yours', note: personaMessage(deps.prompts, 'confirm.not_yours', 'ja') };
    const state = answerState(pending, now(), parsed.round);
    if (state !== 'open') {
      const note = decidedAnswerText(deps.prompts, pending, state, 'ja', deps.timezone);
      return { status: state === 'expired' ? 'expired' : 'decided', note };
    }
    return { pending, round: parsed.round };
  };

  return {
    async open(r) {
      const found = await openAction(r);
      if ('status' in found) return found as FormOpening;
      const fields = editableFields(deps.registry, found.pending);
      if (fields.length === 0) return { status: 'invalid', note: say('confirm.edit_nothing', found.pending) };
      return { status: 'form', form: { title: say('confirm.edit_title', found.pending).slice(0, 45), fields } };
    },

    async submit(r) {
      const found = await openAction(r);
      if ('status' in found) return found;
      const { pending, round } = found;
      const parameters: Record<string, unknown> = { ...pending.proposal.parameters };
      const changes: string[] = [];
      for (const field of editableFields(deps.registry, pending)) {
        const written = r.values[field.id];
        if (written === undefined) continue;
        const text = written.trim();
        if (text === field.value.trim()) continue;
        if (text === '') {
          if (field.required)
            return { status: 'invalid', note: say('confirm.edit_required', pending, { label: field.label }) };
          delete parameters[field.id];
        } else if (field.number) {
          const n = Number(text.normalize('NFKC'));
          if (!Number.isFinite(n))
            return { status: 'invalid', note: say('confirm.edit_number', pending, { label: field.label }) };
          parameters[field.id] = n;
        } else parameters[field.id] = text;
        changes.push(`${field.label}「${text}」`);
      }
      if (changes.length === 0) return { status: 'unchanged', note: say('confirm.edit_unchanged', pending) };
      const text = say('confirm.edit_submitted', pending, { changes: changes.join('、') });
      const res = await deps.intake.accept({
        platform: r.platform,
        orgId: pending.orgId,
        roomId: r.roomId,
        senderAccountId: r.accountId,
        ...(r.senderName !== undefined ? { senderName: r.senderName } : {}),
        text,
        rawText: '',
        mentions: [],
        platformMessageId: `form:${r.interactionId}`,
        sentAt: now().toISOString(),
        answerTo: pending.id,
        answerRound: round,
        edit: { parameters },
        ...(r.replyVia ? { interaction: r.replyVia } : {}),
      });
      deps.logger.info(
        { platform: r.platform, status: res.status, fields: changes.length },
        'confirmation form taken in',
      );
      return { status: 'accepted' };
    },
  };
}
