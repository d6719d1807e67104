import type { InboundMessage } from '../../core/chat';
import { loadDirectory, normaliseName, plainName as plain, type Directory } from '../../authorization/directory';
import { memberSounds, textSounds } from '../../authorization/names';
import { hiddenTopSecret, type DepartmentNode } from '../../authorization/scope';
import type { ContextSource } from '../context-builder';
import { quoted } from '../quote';
import type { ContextSection, RoomMember, SenderProfile } from '../types';

/** Shortest name or alias that is looked for in a message. */
const MIN_TERM_LENGTH = 2;
/** Shortest name sound (romaji) looked for as a word of a message. */
const MIN_SOUND_LENGTH = 3;
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

interface MemberRow {
  id: string;
  name: string;
  aliases: readonly string[];
  departmentId: string | null;
  departmentName: string | null;
}

/** A term of the directory with every member it stands for, in directory order (`seq` counts across all terms). */
interface IndexedTerm {
  key: string;
  entries: { memberId: string; raw: string; seq: number }[];
}

/**
 * What the persons source needs of one organisation's directory, built once per directory (the DirectoryCache
 * gives a new object after an import), not per turn (issue 10): the members with their department names, the
 * name and alias terms, the accounts, and the terms a sender may see per set of hidden departments.
 */
interface PersonIndex {
  members: readonly MemberRow[];
  departments: readonly DepartmentNode[];
  terms: readonly IndexedTerm[];
  /** Names by sound (directory readings and romaji: "tanaka", "tarotanaka"), found as words of the text. */
  sounds: readonly IndexedTerm[];
  /** Every account the directory maps, per platform (room members among them are no guests). */
  accounts: ReadonlyMap<string, ReadonlySet<string>>;
  /** Normalised names of the active members (a room member of such a name is no guest). */
  names: ReadonlySet<string>;
  /** What a sender sees, per set of hidden top-secret departments (a few per organisation). */
  visible: Map<string, Visible>;
}

interface Visible {
  members: readonly MemberRow[];
  terms: readonly Term[];
  sounds: readonly Term[];
}

const indexes = new WeakMap<Directory, PersonIndex>();

function personIndex(directory: Directory): PersonIndex {
  const hit = indexes.get(directory);
  if (hit) return hit;
  const deptName = new Map(directory.departments.map((d) => [d.id, d.name ?? null]));
  const members: MemberRow[] = directory.members.map((m) => ({
    id: m.id,
    name: m.name ?? m.id,
    aliases: m.aliases ?? [],
    departmentId: m.departmentId,
    departmentName: m.departmentId ? (deptName.get(m.departmentId) ?? null) : null,
  }));
  const terms = new Map<string, IndexedTerm>();
  let seq = 0;
  for (const m of members) {
    for (const raw of [m.name, ...m.aliases]) {
      for (const key of new Set([normaliseName(raw), plain(raw)])) {
        if (key.length < MIN_TERM_LENGTH) continue;
        const t = terms.get(key) ?? { key, entries: [] };
        t.entries.push({ memberId: m.id, raw, seq: seq++ });
        terms.set(key, t);
      }
    }
  }
  const sounds = new Map<string, IndexedTerm>();
  for (const m of directory.members) {
    for (const key of memberSounds(m)) {
      if (key.length < MIN_SOUND_LENGTH) continue;
      const t = sounds.get(key) ?? { key, entries: [] };
      t.entries.push({ memberId: m.id, raw: key, seq: seq++ });
      sounds.set(key, t);
    }
  }
  const accounts = new Map<string, Set<string>>();
  for (const a of directory.knownAccounts ?? directory.members.flatMap((m) => m.accounts ?? [])) {
    const set = accounts.get(a.platform) ?? new Set<string>();
    set.add(a.accountId);
    accounts.set(a.platform, set);
  }
  const index: PersonIndex = {
    members,
    departments: directory.departments,
    terms: [...terms.values()],
    sounds: [...sounds.values()],
    accounts,
    names: new Set(members.map((m) => normaliseName(m.name))),
    visible: new Map(),
  };
  indexes.set(directory, index);
  return index;
}

/**
 * The members and terms a sender may see: each term keeps only visible members, labelled by the first of them and
 * ordered by it, exactly as if the terms had been built from the visible members alone. Cached per hidden set.
 */
function visibleTo(index: PersonIndex, hidden: ReadonlySet<string>): Visible {
  const sig = [...hidden].sort().join('\n');
  const hit = index.visible.get(sig);
  if (hit) return hit;
  const members = index.members.filter((m) => m.departmentId === null || !hidden.has(m.departmentId));
  const ids = new Set(members.map((m) => m.id));
  const visible = { members, terms: visibleTerms(index.terms, ids), sounds: visibleTerms(index.sounds, ids) };
  index.visible.set(sig, visible);
  return visible;
}

/** Terms that keep only visible members, labelled by the first of them and ordered by it. */
function visibleTerms(terms: readonly IndexedTerm[], ids: ReadonlySet<string>): Term[] {
  const kept: (Term & { seq: number })[] = [];
  for (const t of terms) {
    const entries = t.entries.filter((e) => ids.has(e.memberId));
    if (entries.length === 0) continue;
    const first = entries[0]!;
    kept.push({ key: t.key, label: first.raw, memberIds: new Set(entries.map((e) => e.memberId)), seq: first.seq });
  }
  return kept.sort((a, b) => a.seq - b.seq).map(({ key, label, memberIds }) => ({ key, label, memberIds }));
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
  skip: { accounts: ReadonlySet<string>; names: ReadonlySet<string>; sender: string },
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

/**
 * Known persons (R-X1): members of the organisation whose name or alias appears in the message, as
 * 「田中太郎（id: tanaka-taro、東京営業課）」, plus a note when a reference (e.g. 田中さん) fits several
 * members. Only directory fields every member may see (no levels, preferences or accounts), and never
 * members of a top-secret department the sender may not see (R-Z1). Read from the cached directory (no statement
 * per turn; without a cache the directory is loaded), with its name index built once per directory.
 */
export const personsSource: ContextSource = {
  name: 'persons',
  usesRoomMembers: true,
  async load({ db, msg, sender, roomMembers = [], directory }) {
    const text = plain(msg.text);
    if (text.length < MIN_TERM_LENGTH) return null;
    const dir = await (directory ? directory(msg.orgId) : loadDirectory(db, msg.orgId));
    return renderPersons(personIndex(dir), text, msg, sender, roomMembers);
  },
};

/** The section for a message's plain text (`plainName` of it, as the terms are). */
function renderPersons(
  index: PersonIndex,
  text: string,
  msg: InboundMessage,
  sender: SenderProfile,
  roomMembers: readonly RoomMember[],
): ContextSection | null {
  const { members, terms, sounds } = visibleTo(index, hiddenTopSecret(sender, index.departments));
  const guestsAll = guestTerms(roomMembers, {
    accounts: index.accounts.get(msg.platform) ?? NO_ACCOUNTS,
    names: index.names,
    sender: msg.senderAccountId,
  });
  const found = matchedTerms(text, [...terms, ...guestsAll]);
  const isGuest = (t: Term) => [...t.memberIds].some((id) => id.startsWith(GUEST));
  // Names written in Latin letters ("Tanaka", "Taro Tanaka") are found by the directory's readings and romaji.
  const spoken = /\p{Script=Latin}/u.test(msg.text) ? textSounds(msg.text) : NO_SOUNDS;
  const heard = sounds.filter((t) => spoken.has(t.key));
  // A whole name heard ("Taro Tanaka") names its member only, not every "Tanaka".
  const named = heard.filter((t) => !heard.some((u) => u.key.length > t.key.length && u.key.includes(t.key)));
  const hits = [...found.filter((t) => !isGuest(t)), ...named];
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
}

const NO_ACCOUNTS: ReadonlySet<string> = new Set();
const NO_SOUNDS: ReadonlySet<string> = new Set();
