/**
 * Readings for names the directory gives only in kanji (issue 40). Directories copied from ChatWork carry 田中太郎
 * and nothing else, so "Tanaka", 「たなか」 and "Taro Tanaka" found nobody. At import, each member without a
 * `reading` or `romaji` whose name has kanji gets the reading of a Japanese morphological dictionary (IPADIC through
 * Lindera, `lindera-wasm-nodejs-ipadic`), stored as `dictionaryReading` (「たなか たろう」); the directory's own
 * reading or romaji always wins (authorization/names.ts). The analyzer loads its dictionary (≈ 3 s, ≈ 150 MB) in a
 * worker thread that ends with the import: nothing of it stays in the service. A name already read for the same
 * name is reused, so importing an unchanged directory does not start it at all.
 */
import { Worker } from 'node:worker_threads';
import { toHiragana } from 'wanakana';
import type { Db } from '../db/prisma';
import type { DirectoryRows } from './directory-rows';

/** Written with kanji (the only names the dictionary is needed for: kana and Latin letters are read as written). */
const HAS_KANJI = /\p{Script=Han}/u;

/** The worker: loads the analyzer, reads each name, posts the readings (katakana per word), ends. CommonJS. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { TokenizerBuilder } = require(workerData.modulePath);
const builder = new TokenizerBuilder();
builder.setDictionary('embedded://ipadic');
builder.setMode('normal');
const tokenizer = builder.build();
const out = workerData.names.map((name) =>
  tokenizer.tokenize(name).map((t) => {
    const get = (k) => (t instanceof Map ? t.get(k) : t[k]);
    const d = get('details');
    return { surface: get('surface'), reading: get('reading') ?? (Array.isArray(d) ? d[7] : undefined) ?? null };
  }),
);
parentPort.postMessage(out);
`;

/** One word of a name as the analyzer read it. */
interface Word {
  surface: string;
  reading: string | null;
}

/**
 * Reads names with the dictionary, in a worker that ends when done. Names it cannot read whole (a word with
 * kanji but no reading) map to null.
 * @throws when the analyzer cannot be loaded or fails.
 */
export async function readNames(names: readonly string[]): Promise<Map<string, string | null>> {
  const unique = [...new Set(names)];
  if (unique.length === 0) return new Map();
  const modulePath = require.resolve('lindera-wasm-nodejs-ipadic');
  const words = await new Promise<Word[][]>((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { names: unique, modulePath } });
    worker.once('message', (m: Word[][]) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the name reader ended early (exit code ${code})`)));
  });
  return new Map(unique.map((name, i) => [name, readingOf(words[i] ?? [])]));
}

/** 「田中」「太郎」 → 「たなか たろう」; null when a word with kanji has no reading. */
function readingOf(words: readonly Word[]): string | null {
  const parts: string[] = [];
  for (const w of words) {
    if (w.surface.trim() === '') continue;
    const reading = w.reading && w.reading !== '*' ? w.reading : HAS_KANJI.test(w.surface) ? null : w.surface;
    if (reading === null) return null;
    parts.push(toHiragana(reading, { passRomaji: true }));
  }
  return parts.length > 0 ? parts.join(' ') : null;
}

/** What {@link withDictionaryReadings} did. */
export interface ReadingsOutcome {
  /** Members whose reading comes from the dictionary (read now or kept from an earlier import). */
  read: number;
  /** Names read by the dictionary in this import (0 when every one was known already). */
  analysed: number;
  /** Set when the dictionary could not be used: those members are found by name and aliases only. */
  failed?: string;
}

/**
 * Fills `dictionaryReading` for members that need it: no reading or romaji in the directory, a name with kanji.
 * A name the organisation's stored rows already read is reused; the rest are read by the dictionary in one worker.
 * When the dictionary fails, the import goes on without those readings (members stay findable by name and alias)
 * and the outcome says so.
 */
export async function withDictionaryReadings(
  db: Pick<Db, 'member'>,
  rows: DirectoryRows,
  read: (names: readonly string[]) => Promise<Map<string, string | null>> = readNames,
): Promise<{ rows: DirectoryRows; outcome: ReadingsOutcome }> {
  const needs = rows.members.filter((m) => !m.reading && !m.romaji && HAS_KANJI.test(m.name));
  if (needs.length === 0) return { rows, outcome: { read: 0, analysed: 0 } };
  const stored = await db.member.findMany({
    where: { orgId: rows.org.id, dictionaryReading: { not: null } },
    select: { name: true, dictionaryReading: true },
  });
  const known = new Map<string, string | null>(stored.map((m) => [m.name, m.dictionaryReading]));
  const missing = [...new Set(needs.map((m) => m.name).filter((n) => !known.has(n)))];
  let failed: string | undefined;
  if (missing.length > 0) {
    try {
      for (const [name, reading] of await read(missing)) known.set(name, reading);
    } catch (err) {
      failed = err instanceof Error ? err.message : String(err);
    }
  }
  const members = rows.members.map((m) =>
    needs.includes(m) ? { ...m, dictionaryReading: known.get(m.name) ?? null } : m,
  );
  const read_ = members.filter((m) => m.dictionaryReading !== null).length;
  const outcome: ReadingsOutcome = {
    read: read_,
    analysed: failed ? 0 : missing.length,
    ...(failed ? { failed } : {}),
  };
  return { rows: { ...rows, members }, outcome };
}
