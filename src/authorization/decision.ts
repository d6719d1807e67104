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
  /** For DENIED: a polite reply that reveals neither the data nor who/what exists (R-Z3). */
  userMessageJa?: string;
  /** For CONFIRM: what the confirmation question adds (Japanese / English). */
  noteJa?: string;
  noteEn?: string;
}

/**
 * Shared by out-of-scope, unknown-target and top-secret denials, so a reply never tells whether the
 * target exists (R-Z3).
 */
export const SCOPE_DENIED_MESSAGE_JA = '申し訳ありません。ご指定の情報を扱う権限がないため、対応できません。';

const MESSAGES_JA: Record<DenyReasonCode, string> = {
  Z_UNKNOWN_TOOL: '申し訳ありません。その操作には対応していません。',
  Z_LEVEL_TOO_LOW: '申し訳ありません。この操作を行う権限がありません。必要な場合は管理者にご相談ください。',
  Z_PUBLIC_NO_EFFECTS: '申し訳ありません。こちらではお話しのお相手のみ承っています。操作はお受けできません。',
  Z_PUBLIC_ROOM: '申し訳ありません。ここは公開の場なので、業務のご依頼はメンバー用のルームかダイレクトメッセージでお願いします。',
  Z_STRANGER: '申し訳ありません。組織のメンバーの方のお手伝いをしています。メンバーの方は管理者に登録をご依頼ください。',
  Z_OUT_OF_SCOPE_USER: SCOPE_DENIED_MESSAGE_JA,
  Z_OUT_OF_SCOPE_DEPARTMENT: SCOPE_DENIED_MESSAGE_JA,
  Z_UNKNOWN_TARGET: SCOPE_DENIED_MESSAGE_JA,
  Z_TOP_SECRET: SCOPE_DENIED_MESSAGE_JA,
  Z_UNKNOWN_LEVEL: '申し訳ありません。権限を確認できなかったため、この操作は実行できません。管理者にご相談ください。',
  Z_LOOKUP_ERROR: '申し訳ありません。権限を確認できなかったため、この操作は実行できませんでした。少し時間をおいてもう一度お試しください。',
};

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

/** A DENIED decision with the standard user message for `code`. */
export function deny(code: DenyReasonCode, reason: string): AuthDecision {
  return { result: 'DENIED', reasonCode: code, reason, userMessageJa: MESSAGES_JA[code] };
}
