/** Why the AuthorizationGate decided as it did (recorded in the audit trail, R-G1 style). */
export type AuthReasonCode =
  | 'Z_OK'
  | 'Z_UNKNOWN_TOOL'
  | 'Z_LEVEL_TOO_LOW'
  | 'Z_PUBLIC_NO_EFFECTS'
  | 'Z_PUBLIC_ROOM'
  | 'Z_STRANGER'
  | 'Z_OUT_OF_SCOPE_USER'
  | 'Z_OUT_OF_SCOPE_DEPARTMENT'
  | 'Z_UNKNOWN_TARGET'
  | 'Z_UNKNOWN_LEVEL'
  | 'Z_TOP_SECRET'
  | 'Z_LOOKUP_ERROR'
  | 'Z_CONFIRM_PERSON'
  | 'Z_CONFIRM_ORG_WIDE';

/** Reason codes of a CONFIRM decision. */
export type ConfirmReasonCode = 'Z_CONFIRM_PERSON' | 'Z_CONFIRM_ORG_WIDE';
/** Reason codes of a DENIED decision. */
export type DenyReasonCode = Exclude<AuthReasonCode, 'Z_OK' | ConfirmReasonCode>;

/** The gate's verdict on one proposal. */
export interface AuthDecision {
  /** ALLOWED; CONFIRM = allowed once the person confirms (the proposal is asked about first); DENIED. */
  result: 'ALLOWED' | 'CONFIRM' | 'DENIED';
  reasonCode: AuthReasonCode;
  /** Internal English explanation (audit/logs). Names parameters and ids, never free text from the user. */
  reason: string;
  /** For CONFIRM: what the confirmation question adds (Japanese / English). */
  noteJa?: string;
  noteEn?: string;
}

const CONFIRM_NOTES: Record<ConfirmReasonCode, { ja: string; en: string }> = {
  Z_CONFIRM_PERSON: { ja: 'ほかの方に関わる操作です', en: 'it concerns another person' },
  Z_CONFIRM_ORG_WIDE: { ja: '組織全体の情報として保存します', en: 'it is saved for the whole organisation' },
};

/** An ALLOWED decision. */
export function allow(reason: string): AuthDecision {
  return { result: 'ALLOWED', reasonCode: 'Z_OK', reason };
}

/** A CONFIRM decision: allowed after the person confirms, with the note the question shows. */
export function confirmBy(code: ConfirmReasonCode, reason: string): AuthDecision {
  const note = CONFIRM_NOTES[code];
  return { result: 'CONFIRM', reasonCode: code, reason, noteJa: note.ja, noteEn: note.en };
}

/**
 * A DENIED decision. What the person is told is written by the model from the reason code it hears (never
 * the data, never whether the target exists, R-Z3).
 */
export function deny(code: DenyReasonCode, reason: string): AuthDecision {
  return { result: 'DENIED', reasonCode: code, reason };
}
