import { normaliseName, plainName as plain } from '../../authorization/directory';
import { hiddenTopSecret, type DepartmentNode } from '../../authorization/scope';
import { quoted } from '../quote';
import { defineSqlSource } from '../sql-source';
import type { RoomMember } from '../types';

/** Shortest name or alias that is looked for in a message. */
const MIN_TERM_LENGTH = 2;
/** At most this many members are listed. */
const MAX_PERSONS = 10;

interface Term {
  /** Normalised form looked for in the text. */
  key: string;
  /** The name or alias as written in the directory (for the ambiguity line). */
  label: string;
  memberIds: Set<string>;
}

const HIRAGANA = /^[\u3041-\u309f]+$/;

/**
 * Every occurrence [start, end) of `key` in `text`. A hiragana-only key (「たなか」) must not follow
 * another hiragana letter, so that it is not found inside ordinary words (「したなかった」).
 */
function occurrences(text: string, key: string): [number, number][] {
  const out: [number, number][] = [];
  const kana = HIRAGANA.test(key);
  for (let i = text.indexOf(key); i >= 0; i = text.indexOf(key, i + 1)) {
    if (kana && i > 0 && HIRAGANA.test(text[i - 1]!)) continue;
    out.push([i, i + key.length]);
  }
  return out;
}

/**
 * Terms found in the text, minus those whose every occurrence lies inside a longer found term
 * (「田中太郎さん」 names 田中太郎 only, not every 田中).
 */
function matchedTerms(text: string, terms: Term[]): Term[] {
  const found = terms.map((t) => ({ t, occ: occurrences(text, t.key) })).filter((x) => x.occ.length > 0);
  return found
    .filter(({ t, occ }) =>
      occ.some(
        ([s, e]) => !found.some((o) => o.t.key.length > t.key.length && o.occ.some(([os, oe]) => os <= s && e <= oe)),
      ),
    )
    .map((x) => x.t);
}

/**
 * Known persons (R-X1): members of the organisation whose name or alias appears in the message, as
 * 「田中太郎（id: tanaka-taro、東京営業課）」, plus a note when a reference (e.g. 田中さん) fits several
 * members. Only directory fields every member may see (no levels, preferences or accounts), and never
 * members of a top-secret department the sender may not see (R-Z1).
 */
interface MemberRow {
  id: string;
  name: string;
  aliases: string[];
  departmentId: string | null;
  departmentName: string | null;
}
interface PersonsData {
  members: MemberRow[];
  departments: DepartmentNode[];
  /** Platform accounts of the directory on this message's platform (room members among them are members). */
  accounts: string[];
}

/** Terms of a member id that stands for a room member, not a directory member. */
const GUEST = 'room-member:';

/**
 * Terms for the room members the directory does not list (issue 12 §3): their name as ChatWork shows it, and
 * each part of a spaced name (「山本 花子」 is also 「山本さん」). Directory accounts, names the directory
 * has and the sender are left out. Matched together with the directory's terms, so a guest's full name
 * (「山本花子」) is not also read as a shorter directory alias inside it (「花子」).
 */
function guestTerms(
  roomMembers: readonly RoomMember[],
  skip: { accounts: Set<string>; names: Set<string>; sender: string },
): Term[] {
  const terms: Term[] = [];
  for (const rm of roomMembers) {
    if (skip.accounts.has(rm.accountId) || rm.accountId === skip.sender) continue;
    if (skip.names.has(normaliseName(rm.name))) continue;
    const keys = new Set([normaliseName(rm.name), plain(rm.name)]);
    for (const part of rm.name.normalize('NFKC').split(/[\s\u3000]+/)) keys.add(normaliseName(part));
    for (const key of keys) {
      if (key.length >= MIN_TERM_LENGTH)
        terms.push({ key, label: rm.name, memberIds: new Set([GUEST + rm.accountId]) });
    }
  }
  return terms;
}

export const personsSource = defineSqlSource<PersonsData>({
  name: 'persons',
  // Active members with their department names, and the department tree (for top-secret departments).
  query: `json_build_object(
      'members', (SELECT coalesce(json_agg(x ORDER BY x.id), '[]') FROM (
        SELECT m.id, m.name, m.aliases, m."departmentId", d.name AS "departmentName"
        FROM members m LEFT JOIN departments d ON d."orgId" = m."orgId" AND d.id = m."departmentId"
        WHERE m."orgId" = $1 AND m.active) x),
      'departments', (SELECT coalesce(json_agg(json_build_object(
          'id', id, 'parentId', "parentId", 'topSecret', "topSecret")), '[]')
        FROM departments WHERE "orgId" = $1),
      'accounts', (SELECT coalesce(json_agg("accountId"), '[]') FROM platform_accounts
        WHERE "orgId" = $1 AND platform = $3))`,
  render(data, { msg, sender, roomMembers = [] }) {
    const hidden = hiddenTopSecret(sender, data.departments);
    const members = data.members.filter((m) => m.departmentId === null || !hidden.has(m.departmentId));
    const text = plain(msg.text);
    if (text.length < MIN_TERM_LENGTH) return null;
    const terms = new Map<string, Term>();
    for (const m of members) {
      for (const raw of [m.name, ...m.aliases]) {
        for (const key of new Set([normaliseName(raw), plain(raw)])) {
          if (key.length < MIN_TERM_LENGTH) continue;
          const t = terms.get(key) ?? { key, label: raw, memberIds: new Set<string>() };
          t.memberIds.add(m.id);
          terms.set(key, t);
        }
      }
    }
    const guestsAll = guestTerms(roomMembers, {
      accounts: new Set(data.accounts),
      names: new Set(data.members.map((m) => normaliseName(m.name))),
      sender: msg.senderAccountId,
    });
    const found = matchedTerms(text, [...terms.values(), ...guestsAll]);
    const isGuest = (t: Term) => [...t.memberIds].some((id) => id.startsWith(GUEST));
    const hits = found.filter((t) => !isGuest(t));
    // People in the room the directory does not list, known by name only (issue 12 §3): no id, no authority.
    const guestIds = new Set(found.filter(isGuest).flatMap((t) => [...t.memberIds]));
    const guests = roomMembers
      .filter((rm) => guestIds.has(GUEST + rm.accountId))
      .slice(0, MAX_PERSONS)
      .map((rm) => `${quoted(rm.name, 60)}さん（このルームのメンバー、ディレクトリ未登録）`);
    if (hits.length === 0 && guests.length === 0) return null;
    const ids = new Set(hits.flatMap((t) => [...t.memberIds]));
    const listed = members.filter((m) => ids.has(m.id)).slice(0, MAX_PERSONS);
    const label = (m: (typeof members)[number]) => {
      const dept = m.departmentName ?? undefined;
      return `${m.name}（id: ${m.id}${dept ? `、${dept}` : ''}）`;
    };
    const lines = listed.map(label);
    const ambiguous = new Map<string, { labels: string[]; count: number }>();
    for (const t of hits.filter((h) => h.memberIds.size > 1)) {
      const names = members.filter((m) => t.memberIds.has(m.id)).map(label);
      const sig = names.join('、');
      const entry = ambiguous.get(sig) ?? { labels: [], count: names.length };
      entry.labels.push(t.label);
      ambiguous.set(sig, entry);
    }
    for (const [names, { labels, count }] of ambiguous) {
      lines.push(
        `注意: 「${labels.join('」「')}」に当てはまる人が${count}人います（${names}）。どの方か分からないときは本人に確認すること。`,
      );
    }
    if (guests.length === 0) return { title: 'メッセージに出てくる人物（組織名簿）', lines };
    lines.push(...guests);
    return { title: 'メッセージに出てくる人物（組織名簿とこのルームのメンバー）', lines };
  },
});
