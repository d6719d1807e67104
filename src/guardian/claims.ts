/**
 * Replies consistent with the turn (issue 29): a reply may say something was done (「登録しました」,
 * "I've sent it") only when a call with that effect executed successfully in this turn. One table of
 * claim phrases per effect kind; each tool declares its kind (`effectKind` in handlers/), so a new tool is
 * covered by declaring it. Pure: the text and the kinds that ran in, the claims nothing supports out.
 */
import type { EffectKind } from '../core/tool-meta';

/** A claim phrase's kind: an effect kind, or `any` for "done" words any executed effect supports. */
export type ClaimKind = EffectKind | 'any';

/**
 * What may follow a plain past form (「登録した」) for it to end a statement — 「登録したウル！」「登録したよ」
 * — rather than describe a noun (「登録したタスク」).
 */
const END = '(?=ウル|よ|ね|わ|ぞ|ので|から|[！!。．.、,\\s🐺〜～♪）)」]|$)';

/** Not a question (「登録しましたか？」) nor a condition (「登録しましたら」); 「登録しましたから」 still claims. */
const NOT_ASKED = '(?!か(?!ら)|ら)';

/**
 * The completed forms of a する-verb stem: 「登録しました」「登録いたしました」「登録しておきました」「登録したウル」…
 * Negations (「登録していません」「登録できませんでした」) and offers (「登録しますか」) are not claims.
 */
function suru(...stems: string[]): RegExp {
  const done = `(?:しました|いたしました|しておきました|済ませました)${NOT_ASKED}|(?:した|しておいた|しといた)${END}`;
  return new RegExp(`(?:${stems.join('|')})を?(?:${done})`, 'g');
}

/**
 * Completed forms of another verb from its stem, its ます stem and its て stem: `verb('送', '送り', '送っ')` →
 * 送りました / 送っておきました / 送っておいた / 送った.
 */
function verb(masu: string, te: string): RegExp {
  return new RegExp(
    `(?:${masu}ました${NOT_ASKED}|${te}ておきました${NOT_ASKED}|${te}ておいた${END}|${te}た${END})`,
    'g',
  );
}

/** Not after "should / shall / can / if …": "Shall I set up a reminder?" is an offer, not a claim. */
const NOT_OFFER =
  '(?<!\\b(?:should|shall|can|could|may|might|would|will|did|do|if|when|once|before|after|until|unless)\\s+)';

/** English: "I('ve| have) [just] created", "has been created", "task created". */
function en(verbs: string, nouns?: string): RegExp[] {
  const adverb = '(?:just\\s+|now\\s+|already\\s+|successfully\\s+|also\\s+|gone\\s+ahead\\s+and\\s+)?';
  const out = [
    new RegExp(`${NOT_OFFER}\\b(?:I|we)(?:['’]ve|\\s+have)?\\s+${adverb}(?:${verbs})\\b`, 'gi'),
    new RegExp(`\\b(?:has|have|had)\\s+${adverb}been\\s+${adverb}(?:${verbs})\\b`, 'gi'),
  ];
  if (nouns) out.push(new RegExp(`\\b(?:${nouns})\\s+(?:is\\s+|was\\s+|has\\s+been\\s+)?(?:${verbs})\\b`, 'gi'));
  return out;
}

/**
 * The claim phrases of each kind. A phrase may stand under several kinds (「登録しました」 fits a task, a
 * reminder and a goal): a claim is supported when any kind it stands under ran.
 */
export const CLAIM_PATTERNS: Readonly<Record<ClaimKind, readonly RegExp[]>> = {
  create_task: [
    suru('登録', '作成', '追加', '依頼', 'お願い'),
    verb('作り', '作っ'),
    ...en('created|added|registered|set\\s+up|assigned', 'task|to-?do'),
  ],
  create_goal: [
    suru('登録', '作成', '設定'),
    verb('立て', '立て'),
    ...en('created|added|registered|set\\s+up|set', 'goal'),
  ],
  complete: [
    suru('完了に', '完了', '完了と', 'クローズ', '完了扱いに'),
    ...en('completed|closed|marked|checked\\s+off'),
  ],
  remind: [
    suru('リマインド', 'リマインダーを?設定', 'リマインダーを?登録', '登録', '設定'),
    /リマインド(?:します|しますね|しておきます|するウル|するね|するよ)(?!か)/g,
    /(?:お知らせ|通知)(?:しておきます|するウル)/g,
    ...en('scheduled|set|created|set\\s+up', 'reminder'),
    /\bI(?:'ll|\s+will)\s+remind\b/gi,
  ],
  // Not 「止めた」「停止しました」: the bot says so itself when a rule stopped a call (「ルールで止めたので」).
  cancel: [
    suru('取り消', 'キャンセル', '中止', '削除', '解除'),
    verb('取り消し', '取り消し'),
    verb('取りやめ', '取りやめ'),
    ...en('cancell?ed|stopped|deleted|removed|called\\s+off'),
  ],
  remember: [
    suru('記憶', 'メモ', '保存', '記録', '登録'),
    verb('覚え', '覚え'),
    /覚えておきます|覚えておくウル|覚えておくね/g,
    ...en('remembered|saved|noted|stored|recorded|memori[sz]ed', 'memory|note'),
  ],
  forget: [
    suru('削除', '消去'),
    verb('忘れ', '忘れ'),
    verb('消し', '消し'),
    ...en('forgotten|forgot|deleted|removed|erased'),
  ],
  send_message: [
    suru('送信', '投稿', '周知', '連絡', 'アナウンス', '共有', '通知', 'お知らせ', 'お伝え', 'お送り'),
    verb('送り', '送っ'),
    verb('伝え', '伝え'),
    /(?:お伝え|伝え)(?:しておきます|ておきます|ておくウル)/g,
    ...en(
      'sent|posted|announced|shared|notified|told|informed|passed\\s+(?:it|this|that)\\s+on',
      'message|announcement',
    ),
  ],
  update: [
    suru('設定', '変更', '更新', '記録', '反映', '延長', '前倒し'),
    verb('延ばし', '延ばし'),
    verb('変え', '変え'),
    verb('差し替え', '差し替え'),
    ...en(
      'updated|changed|set|recorded|turned\\s+(?:on|off)|moved|extended|postponed|renamed|reassigned',
      'setting|progress|deadline|due\\s+date',
    ),
  ],
  start: [
    suru('開始', 'スタート', '着手'),
    verb('始め', '始め'),
    verb('取りかかり', '取りかかっ'),
    ...en('started|begun|kicked\\s+off'),
  ],
  save: [suru('保存', '記録'), ...en('saved|stored|written|wrote', 'artifact|file|document')],
  any: [
    suru('対応', '実行', '完了', '処理'),
    /(?:やっておきました|済ませました|完了です|対応済みです|やっておいた(?:ウル|よ))/g,
    /(?:^|[\n。！!.])\s*(?:done|all\s+done|all\s+set)\b/gi,
    ...en('done|taken\\s+care\\s+of|handled|completed|carried\\s+(?:it\\s+)?out'),
  ],
};

/** One claim in the reply that no executed call supports. */
export interface UnsupportedClaim {
  /** The claimed phrase as written. */
  text: string;
  /** The kinds it would need (one of them executed). */
  kinds: ClaimKind[];
}

/** The verdict of {@link checkReplyClaims}. */
export interface ClaimCheckResult {
  action: 'ALLOW' | 'MODIFY';
  reasonCode: 'G_REPLY_OK' | 'G_REPLY_UNSUPPORTED_CLAIM';
  claims: UnsupportedClaim[];
}

/** A persona's endings as one pattern (same length replacement keeps the claims' positions in the text). */
const endingPattern = (endings: readonly string[]) =>
  new RegExp(endings.map((e) => e.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');

interface Match {
  kind: ClaimKind;
  start: number;
  end: number;
}

/**
 * The claims of done work in `text` that nothing in `executed` (the effect kinds of the calls that ran
 * successfully in this turn) supports: overlapping phrases count as one claim, supported when any kind
 * they stand under ran (`any`: when anything with an effect ran). MODIFY G_REPLY_UNSUPPORTED_CLAIM when
 * there is one (the reply is written again), otherwise ALLOW G_REPLY_OK. `endings` are a persona file's own
 * sentence endings: 「登録したニャ」 ends a statement as 「登録したウル」 does.
 */
export function checkReplyClaims(
  text: string,
  executed: ReadonlySet<EffectKind>,
  o: { endings?: readonly string[]; table?: Readonly<Record<ClaimKind, readonly RegExp[]>> } = {},
): ClaimCheckResult {
  const endings = o.endings ?? [];
  const read = endings.length ? text.replace(endingPattern(endings), (e) => '。'.padEnd(e.length, ' ')) : text;
  const matches: Match[] = [];
  for (const [kind, patterns] of Object.entries(o.table ?? CLAIM_PATTERNS) as [ClaimKind, readonly RegExp[]][]) {
    for (const re of patterns) {
      const global = re.global ? re : new RegExp(re.source, `${re.flags}g`);
      for (const m of read.matchAll(global)) matches.push({ kind, start: m.index, end: m.index + m[0].length });
    }
  }
  matches.sort((a, b) => a.start - b.start || b.end - a.end);
  const groups: Match[][] = [];
  for (const m of matches) {
    const last = groups.at(-1);
    if (last && m.start < Math.max(...last.map((x) => x.end))) last.push(m);
    else groups.push([m]);
  }
  const supported = (k: ClaimKind) => (k === 'any' ? executed.size > 0 : executed.has(k));
  const claims = groups
    .filter((g) => !g.some((m) => supported(m.kind)))
    .map((g) => ({
      text: text.slice(g[0]!.start, Math.max(...g.map((m) => m.end))).trim(),
      kinds: [...new Set(g.map((m) => m.kind))],
    }));
  return claims.length > 0
    ? { action: 'MODIFY', reasonCode: 'G_REPLY_UNSUPPORTED_CLAIM', claims }
    : { action: 'ALLOW', reasonCode: 'G_REPLY_OK', claims };
}
