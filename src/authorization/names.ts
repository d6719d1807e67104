/**
 * Names as people write them (issue 33): THE matcher of person references, used by the AuthorizationGate
 * (targets.ts) and the handlers (tools/person-resolver.ts), so the gate checks exactly the member a handler
 * touches. A reference is compared in two forms:
 * - written: width (NFKC), spaces, case, trailing honorifics, and kanji variants (斎/齋/齊 → 斉, 髙 → 高, 﨑 → 崎,
 *   邊/邉 → 辺 …) folded — 「齋藤さん」 finds 斉藤;
 * - sound: kana and romaji read as one romaji spelling (wanakana, Hepburn), long vowels folded (Satō, Satou, Sato,
 *   Satoh, サトー are one), family/given order free — "Taro Tanaka", 「たなか たろう」 and 「タナカ」 find the member
 *   whose directory reading is 「たなか たろう」 or romaji "Tanaka Taro".
 * Pure.
 */
import { toRomaji } from 'wanakana';

/** Honorifics and titles people put after a name (「田中さん」「田中部長」「Tanaka-san」). */
export const HONORIFICS = /(さん|様|さま|くん|君|ちゃん|氏|殿|先輩|部長|課長|社長|-?san)$/i;

/**
 * Kanji written differently in names that people treat as the same (old/variant forms → the common one).
 * NFKC folds compatibility forms only; these are separate characters.
 */
const KANJI_VARIANTS: Readonly<Record<string, string>> = {
  斎: '斉',
  齋: '斉',
  齊: '斉',
  髙: '高',
  﨑: '崎',
  嵜: '崎',
  碕: '崎',
  邊: '辺',
  邉: '辺',
  濱: '浜',
  濵: '浜',
  澤: '沢',
  櫻: '桜',
  廣: '広',
  國: '国',
  眞: '真',
  冨: '富',
  嶋: '島',
  嶌: '島',
  德: '徳',
  惠: '恵',
  關: '関',
  實: '実',
  榮: '栄',
  瀨: '瀬',
  條: '条',
  藏: '蔵',
  龍: '竜',
  淵: '渕',
  槇: '槙',
  曾: '曽',
  彌: '弥',
  學: '学',
  圓: '円',
  增: '増',
  壽: '寿',
  來: '来',
};
const VARIANT = new RegExp(`[${Object.keys(KANJI_VARIANTS).join('')}]`, 'gu');

/** Width, spaces, case and kanji variants normalised; honorifics kept (「社長」 stays findable as an alias). */
export function plainName(s: string): string {
  return s
    .normalize('NFKC')
    .replace(/[\s\u3000]+/g, '')
    .toLowerCase()
    .replace(VARIANT, (c) => KANJI_VARIANTS[c] ?? c);
}

/**
 * A person reference normalised for matching its written form: {@link plainName} and up to two trailing
 * honorifics (「田中部長さん」 → 「田中」).
 */
export function normaliseName(s: string): string {
  let n = plainName(s);
  for (let i = 0; i < 2; i++) n = n.replace(HONORIFICS, '');
  return n;
}

/** Text that can be read aloud as written: kana, Latin letters (with accents), separators. */
const PHONETIC = /^[\p{Script=Hiragana}\p{Script=Katakana}ー\p{Script=Latin}\s'’.\-・·]+$/u;
const SPOKEN_HONORIFICS = /[\s-]*(?:さん|様|さま|くん|君|ちゃん|氏|殿|san|sama|kun|chan)$/i;
const TITLES = /^(?:mr|mrs|ms|miss|dr)\.?\s+/i;

/**
 * One spelling of a romaji word: accents dropped, letters only, long vowels folded (ou, oo, oh → o; uu → u)
 * and m before b/p/m read as n (Namba = Nanba, Homma = Honma).
 */
function foldRomaji(r: string): string {
  return r
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z]/g, '')
    .replace(/oh(?=[^aeiouy]|$)/g, 'o')
    .replace(/o[ou]/g, 'o')
    .replace(/uu/g, 'u')
    .replace(/m(?=[bpm])/g, 'n');
}

/**
 * The sound of a name as romaji words (「たなか たろう」 → [tanaka, taro]; "Mr. Tanaka-san" → [tanaka]), or null
 * when it is not written in kana or Latin letters (kanji has no reading of its own here).
 */
export function nameSound(text: string): string[] | null {
  let t = text.normalize('NFKC').trim().replace(TITLES, '');
  for (let i = 0; i < 2; i++) t = t.replace(SPOKEN_HONORIFICS, '');
  if (t === '' || !PHONETIC.test(t)) return null;
  const words = t
    .split(/[\s・·]+/)
    .map((w) => foldRomaji(toRomaji(w)))
    .filter((w) => w.length > 0);
  return words.length > 0 ? words : null;
}

/** What a member is found by: name, aliases, and the directory's reading (kana) and romaji. */
export interface NamedMember {
  id: string;
  name?: string;
  aliases?: readonly string[];
  /** Reading in kana, family and given name separated by a space (「たなか たろう」). */
  reading?: string | null;
  /** Romaji as the member writes it ("Tanaka Taro", "Taro Tanaka"). */
  romaji?: string | null;
  /** The reading the dictionary gave at import (org/name-readings.ts); `reading` and `romaji` win over it. */
  dictionaryReading?: string | null;
}

interface MemberKeys {
  /** Normalised written names and aliases. */
  written: string[];
  /** The normalised written name (partial matches: 「太郎」 → 田中太郎). */
  name: string;
  /** Whole names by sound, in both orders ("tanakataro", "tarotanaka"). */
  sounds: string[];
  /** Single words of the names by sound (family or given name alone). */
  words: string[];
}

const keysCache = new WeakMap<NamedMember, MemberKeys>();

function keysOf(m: NamedMember): MemberKeys {
  const hit = keysCache.get(m);
  if (hit) return hit;
  const written = [m.name, ...(m.aliases ?? [])].filter((n): n is string => typeof n === 'string');
  const sounds = new Set<string>();
  const words = new Set<string>();
  // Whole names by sound come from the name, its reading and romaji; an alias in kana or Latin letters adds its
  // words only (an alias such as 「たなか」 is found in writing; by sound it is a family name like any other).
  // The directory's own reading or romaji is the person's; the dictionary's guess counts only without them.
  const guessed = m.reading || m.romaji ? null : m.dictionaryReading;
  for (const [source, whole] of [
    [m.reading, true],
    [guessed, true],
    [m.romaji, true],
    [m.name, true],
    ...(m.aliases ?? []).map((a) => [a, false] as const),
  ] as const) {
    const w = source ? nameSound(source) : null;
    if (!w) continue;
    if (whole) sounds.add(w.join('')).add([...w].reverse().join(''));
    for (const x of w) words.add(x);
  }
  const keys: MemberKeys = {
    written: written.map(normaliseName),
    name: typeof m.name === 'string' ? normaliseName(m.name) : '',
    sounds: [...sounds],
    words: [...words],
  };
  keysCache.set(m, keys);
  return keys;
}

/**
 * A member's names by sound: whole names in both orders and their single words ("tanakataro", "tarotanaka",
 * "tanaka", "taro"); empty without a reading, romaji or a kana/Latin name.
 */
export function memberSounds(m: NamedMember): readonly string[] {
  const k = keysOf(m);
  return [...new Set([...k.sounds, ...k.words])];
}

/**
 * The sounds a text may name a person by: each Latin word and each pair of neighbouring words, folded as names
 * are ("Please ask Taro Tanaka" → please, ask, taro, tanaka, pleaseask, asktaro, tarotanaka). Japanese text is
 * found by its written names instead.
 */
export function textSounds(text: string): Set<string> {
  const words = (text.normalize('NFKC').match(/[\p{Script=Latin}'’]+/gu) ?? []).map(foldRomaji).filter(Boolean);
  const out = new Set(words);
  for (let i = 1; i < words.length; i++) out.add(words[i - 1]! + words[i]!);
  return out;
}

/** A sound shorter than this is not matched as part of a name (one or two letters fit too many). */
const MIN_PARTIAL_SOUND = 3;

/**
 * Members a reference points to: an exact member id; otherwise every member whose name or alias matches in
 * writing, or whose whole name matches by sound (either order); otherwise members whose written name starts or
 * ends with it (「太郎」 → 田中太郎) or one of whose name words it is by sound ("Tanaka", 「たなか」).
 * Empty = unknown; several = ambiguous (the handler asks which one is meant).
 */
export function matchMembers<M extends NamedMember>(ref: string, members: readonly M[]): M[] {
  const trimmed = ref.trim();
  if (trimmed === '') return [];
  const byId = members.find((m) => m.id === trimmed);
  if (byId) return [byId];
  const q = normaliseName(trimmed);
  const words = nameSound(trimmed);
  const sound = words?.join('') ?? '';
  if (q === '' && sound === '') return [];
  const exact = members.filter((m) => {
    const k = keysOf(m);
    return (q !== '' && k.written.includes(q)) || (sound !== '' && k.sounds.includes(sound));
  });
  if (exact.length > 0) return exact;
  return members.filter((m) => {
    const k = keysOf(m);
    if (q !== '' && k.name !== '' && (k.name.startsWith(q) || k.name.endsWith(q))) return true;
    if (sound.length < MIN_PARTIAL_SOUND) return false;
    return k.words.includes(sound) || k.sounds.some((s) => s.startsWith(sound));
  });
}

/** Edit distance of two short strings (names by sound), stopping early past `max`. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    if (Math.min(...cur) > max) return max + 1;
    prev = cur;
  }
  return prev[b.length]!;
}

/** Share of the distinct characters of `q` that occur in `name` (0..1). */
function sharedShare(q: string, name: string): number {
  const chars = [...new Set(q)];
  return chars.length === 0 ? 0 : chars.filter((c) => name.includes(c)).length / chars.length;
}

/**
 * Members a reference that matched nobody may have meant (issue 40): written names sharing at least half of
 * its characters (「鈴本」 → 鈴木健二, 「高槁」 → 高橋亮), or names one letter off by sound ("Tanka" → Tanaka,
 * 「すずく」 → すずき); at most `limit`, closest first. Not a match: the person is asked, never guessed for.
 */
export function nearMembers<M extends NamedMember>(ref: string, members: readonly M[], limit = 3): M[] {
  const q = normaliseName(ref);
  const sound = nameSound(ref)?.join('') ?? '';
  const scored: { m: M; score: number }[] = [];
  for (const m of members) {
    const k = keysOf(m);
    let score = 0;
    if (q.length >= 2) score = Math.max(...k.written.map((w) => sharedShare(q, w)), 0);
    if (score < 0.5) score = 0;
    if (sound.length >= 4) {
      const max = sound.length >= 7 ? 2 : 1;
      const d = Math.min(...[...k.sounds, ...k.words].map((s) => editDistance(sound, s, max)), max + 1);
      if (d <= max) score = Math.max(score, 1 - d / (max + 1));
    }
    if (score > 0) scored.push({ m, score });
  }
  return scored
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((s) => s.m);
}

/** What a department is found by: its id, name and aliases. */
export interface NamedDepartment {
  id: string;
  name?: string;
  aliases?: readonly string[];
}

/** A department name as compared: {@link plainName} without a trailing 「の皆さん」-like tail. */
function departmentKey(s: string): string {
  return plainName(s).replace(/(?:の)?(?:皆さん|みなさん|皆様|みんな|全員|メンバー|の人たち|の方々)$/u, '');
}

/**
 * Departments a reference points to (issue 40): an exact id; otherwise every department whose name or alias
 * matches it written as people write it (width, case, spaces); otherwise those whose name starts or ends with it
 * (「営業」 → 営業部). Empty = unknown; several = ambiguous.
 */
export function matchDepartments<D extends NamedDepartment>(ref: string, departments: readonly D[]): D[] {
  const trimmed = ref.trim();
  if (trimmed === '') return [];
  const byId = departments.find((d) => d.id === trimmed);
  if (byId) return [byId];
  const q = departmentKey(trimmed);
  if (q === '') return [];
  const names = (d: D) => [d.name, ...(d.aliases ?? [])].filter((n): n is string => typeof n === 'string');
  const exact = departments.filter((d) => d.id.toLowerCase() === q || names(d).some((n) => departmentKey(n) === q));
  if (exact.length > 0) return exact;
  if ([...q].length < 2) return [];
  return departments.filter((d) =>
    names(d).some((n) => departmentKey(n).startsWith(q) || departmentKey(n).endsWith(q)),
  );
}

/** Departments a reference that matched none may have meant: names sharing at least half of its characters. */
export function nearDepartments<D extends NamedDepartment>(ref: string, departments: readonly D[], limit = 3): D[] {
  const q = departmentKey(ref);
  if ([...q].length < 2) return [];
  const names = (d: D) => [d.name ?? d.id, ...(d.aliases ?? [])];
  return departments
    .map((d) => ({ d, score: Math.max(...names(d).map((n) => sharedShare(q, departmentKey(n)))) }))
    .filter((s) => s.score >= 0.5)
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((s) => s.d);
}
