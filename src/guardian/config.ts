/**
 * Guardian configuration and the default rule tables (SPEC §3.5, R-G2).
 * Everything here is data: changing a list changes behaviour without touching the decision code.
 */

/** Seed 004 approval modes: `standard` = the decision tree; `strict` = confirm every tool with effects. */
export type ApprovalMode = 'standard' | 'strict';

/** Guardian settings for one organisation. */
export interface GuardianConfig {
  approvalMode: ApprovalMode;
  /** Tool names that strict mode lets through without confirmation (the tree still applies). */
  autoApprove: string[];
  /** Confidential words (substring match, NFKC, case-insensitive) → BLOCK G_CONFIDENTIAL. */
  confidentialWords: string[];
  /** Secret-like value patterns (tested against NFKC text) → BLOCK G_NG_PATTERN. */
  ngPatterns: RegExp[];
  /**
   * Rule names (e.g. `param.recipients`, `policy:<id>`) or reason codes (e.g. `G_RECIPIENTS_MANY`) that
   * are evaluated and traced with `enforced: false` but do not change the verdict. Tool existence
   * (priority 0) cannot be shadowed.
   */
  shadowRules: string[];
}

/** An organisation policy ("CEO teaching") with a machine rule (priority 4). */
export interface GuardianPolicy {
  id: string;
  /** Cited to the user, e.g. 「経費は部長承認」. */
  title: string;
  rule: {
    /** Tool names the rule covers; `'*'` = any tool. */
    tools: string[];
    action: 'confirm' | 'block';
    /** When present, the rule only applies if one of them appears in the parameters. */
    keywords?: string[];
    /** Evaluate and trace only (enforced: false). */
    shadow?: boolean;
  };
}

/**
 * Confidential topics (issue 40): what the words of {@link TOPIC_WORDS} are about. The directory names the
 * departments whose work a topic is (`handles:`); the confidentiality rule (rules-core.ts) reads both.
 */
export const CONFIDENTIAL_TOPICS = ['pay', 'evaluation', 'personnel', 'deal'] as const;
export type ConfidentialTopic = (typeof CONFIDENTIAL_TOPICS)[number];

/** The default confidential words by topic (SPEC §3.5 priority 2). */
export const TOPIC_WORDS: Readonly<Record<ConfidentialTopic, readonly string[]>> = {
  pay: ['給与', '給料', '年収', '報酬', '賞与', 'salary', 'salaries', 'compensation', 'payroll'],
  evaluation: ['評価', '査定', '人事評価'],
  personnel: ['解雇'],
  deal: ['M&A', '買収'],
};

/** Default confidential words: every topic's (SPEC §3.5 priority 2). */
export const DEFAULT_CONFIDENTIAL_WORDS: readonly string[] = Object.values(TOPIC_WORDS).flat();

/** The topic of a confidential word (NFKC, case-insensitive); undefined for a word no topic lists. */
export function topicOf(word: string): ConfidentialTopic | undefined {
  const w = word.normalize('NFKC').toLowerCase();
  return CONFIDENTIAL_TOPICS.find((t) => TOPIC_WORDS[t].some((x) => x.normalize('NFKC').toLowerCase() === w));
}

/**
 * Default NG patterns: secret VALUES, not topics (「パスワードを変更する」 passes,
 * 「パスワード: hunter22」 does not). Tested against NFKC-normalised text.
 */
export const DEFAULT_NG_PATTERNS: readonly RegExp[] = [
  // password / パスワード followed by a value
  /(?:password|passwd|pwd|パスワード|暗証番号)\s*(?:は|:|=)\s*[\x21-\x7e]{4,}/i,
  // API keys and tokens (well-known prefixes)
  /\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{16,}/,
  /\bxox[abpr]-[A-Za-z0-9-]{10,}/,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/i,
  // token / secret / API key dumping: a label followed by a long value
  /(?:api[_ -]?key|access[_ -]?token|secret|token|トークン|apiキー|シークレット)\s*(?:は|:|=)\s*[\x21-\x7e]{8,}/i,
  // secret environment variable names and credentials in URLs
  /\b[A-Z][A-Z0-9_]*_(?:TOKEN|API_KEY|SECRET)\b/,
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s:@/]+:[^\s@/]+@/i,
  // マイナンバー (12 digits)
  /(?:マイナンバー|個人番号|my\s*number)\D{0,8}\d{4}[\s\-‐−]?\d{4}[\s\-‐−]?\d{4}/i,
  // クレジットカード番号
  /(?:クレジットカード|カード番号|credit\s*card)\D{0,10}(?:\d[\s\-‐−]?){13,19}/i,
  /(?<!\d)\d{4}([\s\-‐−])\d{4}\1\d{4}\1\d{4}(?!\d)/,
];

/** The effect of a tool that stores a memory (handlers/memory.ts `save_memory`). */
export const MEMORY_STORE_EFFECT = 'db.memory_create';

/**
 * Personal identifiers and health details (issue 33): never stored in memories, value or not (「田中さんの
 * マイナンバーは…」, 「鈴木さんは来週入院」). Words that only name a topic people discuss at work without
 * revealing anyone's details (「口座開設」, 「出張にはパスポートが必要」) are not on the list. Tested against NFKC
 * text, case-insensitive.
 */
export const PERSONAL_IDENTIFIER_PATTERNS: readonly RegExp[] = [
  // My Number, bank accounts, cards, passports, licences, pension and insurance numbers
  /マイナンバー|個人番号|my\s*number/i,
  /口座番号|口座\D{0,16}\d{6,8}(?!\d)|(?:普通|当座)(?:預金)?\s*\d{7}(?!\d)|(?:bank\s*)?account\s*(?:number|no\.?)|bank\s*account/i,
  /カード番号|card\s*(?:number|no\.?)|セキュリティコード|security\s*code|cvv|cvc/i,
  /パスポート番号|旅券番号|passport\s*(?:number|no\.?)|(?<![A-Za-z])[A-Z]{2}\d{7}(?!\d)/i,
  /免許証番号|driver'?s?\s*licen[cs]e\s*(?:number|no\.?)|基礎年金番号|年金番号|保険証|保険者番号/i,
  // health details
  /病気|病名|病歴|持病|既往歴|診断|通院|入院|手術|服薬|処方|健康診断|健診|妊娠|うつ病|精神疾患|障害者手帳|癌|がん検診/,
  /diagnos|illness|disease|medical\s*(?:condition|history|record)|medication|pregnan/i,
  /surgery|hospitali[sz]|mental\s*health/i,
];

/**
 * Phrases by which the LLM would be deciding permissions itself (seed 003 §4.7.2) →
 * BLOCK G_CONSTITUTION_PERMISSION_CLAIM. Tested against NFKC-normalised reasoning text.
 */
export const PERMISSION_CLAIM_PATTERNS: readonly RegExp[] = [
  /権限が(?:ある|あり|あります|あるので|あるため)/,
  /権限を(?:持って|持つ|有して|有する)/,
  /権限(?:あり|保持者)/,
  /許可(?:されている|されています|されてる|済み|を得ている|を得ています)/,
  /承認済み/,
  /管理者(?:なので|だから|です|である|であり|として許可)/,
  /アクセスできる(?:ので|ため|から)/,
  /見せて(?:よい|良い|もよい|も良い|もいい)/,
  /\b(?:has|have) (?:the )?(?:permission|authori[sz]ation|rights?)\b/i,
  /\b(?:is|am|are) (?:authori[sz]ed|permitted)\b/i,
  /\b(?:is|am|are) allowed to\b/i,
  /\b(?:is|am|are) an? (?:admin|administrator)\b/i,
  /\balready (?:approved|authori[sz]ed)\b/i,
  /\bpermission (?:is )?granted\b/i,
];

/** Defaults: standard mode, default word and pattern lists, nothing shadowed. */
export function defaultGuardianConfig(): GuardianConfig {
  return {
    approvalMode: 'standard',
    autoApprove: [],
    confidentialWords: [...DEFAULT_CONFIDENTIAL_WORDS],
    ngPatterns: [...DEFAULT_NG_PATTERNS],
    shadowRules: [],
  };
}
