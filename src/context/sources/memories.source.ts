import { quoted } from '../quote';
import { defineSqlSource } from '../sql-source';

/** Most memories put in the context. */
const MAX_MEMORIES = 8;
/** Most memories about the sender among them (the rest is left for relevant facts). */
const MAX_ABOUT_SENDER = 5;
/** Facts scanned for overlap with the message (newest first). */
const FACT_POOL = 200;

const KIND_LABEL: Record<string, string> = { preference: '好み', person: '本人について', fact: '組織の事実' };

const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー々]+/gu;
const WORD = /[\p{L}\p{N}]{2,}/gu;
const HIRAGANA_ONLY = /^[\p{Script=Hiragana}ー]+$/u;

/**
 * Matching tokens of a text: Latin/number words (2+ chars) and bigrams of Japanese runs, except
 * bigrams made only of hiragana (particles and endings such as 「して」 match everything).
 */
export function overlapTokens(text: string): Set<string> {
  const s = text.normalize('NFKC').toLowerCase();
  const out = new Set<string>();
  for (const run of s.match(CJK_RUN) ?? []) {
    const chars = [...run];
    if (chars.length === 1 && !HIRAGANA_ONLY.test(run)) out.add(run);
    for (let i = 0; i + 1 < chars.length; i++) {
      const bigram = chars[i]! + chars[i + 1]!;
      if (!HIRAGANA_ONLY.test(bigram)) out.add(bigram);
    }
  }
  for (const w of s.replace(CJK_RUN, ' ').match(WORD) ?? []) out.add(w);
  return out;
}

function overlap(tokens: Set<string>, text: string): number {
  let n = 0;
  for (const t of overlapTokens(text)) if (tokens.has(t)) n++;
  return n;
}

/**
 * Context source "memories" (R-X1, lazy by message): up to 8 memories — those about the sender
 * (relevant first, then newest) and organisation facts sharing a word or bigram with the message
 * (best overlap first). Memories about other people are never included. Null when there are none.
 */
interface MemoryRow {
  kind: string;
  content: string;
  about: boolean;
}

export const memoriesSource = defineSqlSource<MemoryRow[]>({
  name: 'memories',
  // Memories about the sender, and recent organisation facts (ranked against the message here).
  query: `(SELECT coalesce(json_agg(x), '[]') FROM (
      (SELECT kind, content, true AS about FROM memories WHERE "orgId" = $1 AND "subjectMemberId" = $2
       ORDER BY "createdAt" DESC, id DESC LIMIT 50)
      UNION ALL
      (SELECT kind, content, false FROM memories WHERE "orgId" = $1 AND kind = 'fact' AND "subjectMemberId" IS NULL
       ORDER BY "createdAt" DESC, id DESC LIMIT ${FACT_POOL})) x)`,
  render(rows, { msg, sender }) {
    if (!sender.known || !sender.memberId) return null;
    const tokens = overlapTokens(msg.text);
    const about = rows.filter((r) => r.about);
    const facts = tokens.size === 0 ? [] : rows.filter((r) => !r.about);
    const rank = <T extends { content: string }>(list: T[]) =>
      list.map((r, i) => ({ r, score: overlap(tokens, r.content), i })).sort((a, b) => b.score - a.score || a.i - b.i);
    const self = rank(about)
      .slice(0, MAX_ABOUT_SENDER)
      .map((x) => x.r);
    const relevant = rank(facts)
      .filter((x) => x.score > 0)
      .slice(0, MAX_MEMORIES - self.length)
      .map((x) => x.r);
    const chosen = [...self, ...relevant];
    if (chosen.length === 0) return null;
    const lines = chosen.map((m) => `(${KIND_LABEL[m.kind] ?? m.kind}) ${quoted(m.content)}`);
    return { title: '関連する記憶 (memories)', lines };
  },
});
