import fs from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { fill } from '../core/messages';
import { lineOf } from '../org/yaml-locate';

/**
 * A company's own persona (PERSONA_FILE): its name, first person and sentence endings, a few lines of tone and
 * the message texts it says differently — texts only, no code (prompts/persona.example.yaml). The persona
 * prompt is prompts/persona.file.md filled with them; messages not overridden are the base persona's.
 */
export interface PersonaFile {
  name: string;
  otherNames: string[];
  firstPerson: string;
  sentenceEndings: string[];
  tone: string[];
  base: 'soul' | 'polite';
  messages: { ja: Record<string, string>; en: Record<string, string> };
}

/** A persona file that cannot be used: one sentence in Japanese and in English (start-up picks the terminal's). */
export class PersonaFileError extends Error {
  constructor(
    readonly ja: string,
    readonly en: string,
  ) {
    super(en);
    this.name = 'PersonaFileError';
  }
  say(lang: 'ja' | 'en'): string {
    return lang === 'ja' ? this.ja : this.en;
  }
}

const ZText = (max: number) => z.string().trim().min(1).max(max);
const ZMessages = z.record(z.string(), z.string().trim().min(1));
const ZPersonaFile = z.strictObject({
  name: ZText(30),
  other_names: z.array(ZText(30)).optional(),
  first_person: ZText(10),
  sentence_endings: z.array(ZText(10)).min(1),
  tone: z.string().optional(),
  base: z.enum(['soul', 'polite']).default('polite'),
  messages: z.strictObject({ ja: ZMessages.optional(), en: ZMessages.optional() }).optional(),
});

/** The items a persona file may have, as the error for an unknown one lists them. */
const ITEMS = 'name, other_names, first_person, sentence_endings, tone, base, messages';
/** Each item in words, for an error about it. */
const ITEM_WORDS: Record<string, [ja: string, en: string]> = {
  name: ['name（ボットの名前）', 'name (the bot’s name)'],
  other_names: ['other_names（ほかの呼び名の一覧）', 'other_names (a list of other names)'],
  first_person: ['first_person（一人称、例: わたし）', 'first_person (how it calls itself, e.g. わたし)'],
  sentence_endings: [
    'sentence_endings（文末の一覧、例: [です, ます]）',
    'sentence_endings (a list, e.g. [です, ます])',
  ],
  tone: ['tone（話し方の説明）', 'tone (how it speaks)'],
  base: ['base（soul か polite）', 'base (soul or polite)'],
  messages: ['messages（置き換える文）', 'messages (the texts it replaces)'],
};

const placeholders = (text: string) => [...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!).sort();

/**
 * Reads and checks a persona file against the base persona's messages (every key it replaces must exist there
 * and keep that text's placeholders, such as {{errorId}}). Throws a {@link PersonaFileError} naming the file,
 * the line and the fix.
 */
export function readPersonaFile(
  file: string,
  baseMessages: (base: 'soul' | 'polite') => Record<'ja' | 'en', Record<string, string>>,
): PersonaFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new PersonaFileError(
      `PERSONA_FILE のファイル ${file} が見つかりません（パスを直すか、例の prompts/persona.example.yaml を指定してください）。`,
      `PERSONA_FILE: ${file} cannot be read; fix the path or start from prompts/persona.example.yaml.`,
    );
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const at = (path: PropertyKey[]) => lineOf(doc, lines, path) ?? 1;
  if (doc.errors.length > 0) {
    const line = lines.linePos(doc.errors[0]!.pos[0]).line;
    throw new PersonaFileError(
      `ペルソナファイル ${file} の${line}行目を読めません（YAMLの書き方を確かめてください: 字下げは半角スペース、` +
        '「:」は半角、「: 」を含む文は " で囲む）。',
      `Persona file ${file}, line ${line}: not valid YAML; indent with spaces, use a half-width ":" and quote ` +
        'texts that contain ": ".',
    );
  }
  const parsed = ZPersonaFile.safeParse(doc.toJS());
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = [...issue.path, ...(issue.code === 'unrecognized_keys' ? issue.keys.slice(0, 1) : [])];
    const key = String(path[0] ?? '');
    const where = `ペルソナファイル ${file} の${at(path)}行目`;
    const whereEn = `Persona file ${file}, line ${at(path)}`;
    if (issue.code === 'unrecognized_keys') {
      const unknown = issue.keys[0]!;
      throw new PersonaFileError(
        `${where}: 「${unknown}」は使えない項目です（使えるのは ${ITEMS}）。`,
        `${whereEn}: "${unknown}" is not an item of a persona file (use ${ITEMS}).`,
      );
    }
    const [ja, en] = ITEM_WORDS[key] ?? ['値', 'the value'];
    const raw = doc.toJS() as unknown;
    if (path.length === 1 && raw !== null && typeof raw === 'object' && !(key in raw))
      throw new PersonaFileError(
        `ペルソナファイル ${file} に ${ja}がありません（書き足してください。例は prompts/persona.example.yaml）。`,
        `Persona file ${file} has no ${en}; add it (see prompts/persona.example.yaml).`,
      );
    throw new PersonaFileError(
      `${where}: ${ja}を正しく書いてください（例は prompts/persona.example.yaml）。`,
      `${whereEn}: write ${en} correctly (see prompts/persona.example.yaml).`,
    );
  }
  const p = parsed.data;
  const base = baseMessages(p.base);
  const messages = { ja: p.messages?.ja ?? {}, en: p.messages?.en ?? {} };
  for (const lang of ['ja', 'en'] as const) {
    for (const [key, value] of Object.entries(messages[lang])) {
      const where = `ペルソナファイル ${file} の${at(['messages', lang, key])}行目`;
      const whereEn = `Persona file ${file}, line ${at(['messages', lang, key])}`;
      const original = key === 'bot.names' ? undefined : base[lang][key];
      if (original === undefined)
        throw new PersonaFileError(
          `${where}: 「${key}」は置き換えられる文ではありません（prompts/messages.${p.base}.json にあるキーを書いてください）。`,
          `${whereEn}: "${key}" is not a message that can be replaced (use a key of prompts/messages.${p.base}.json).`,
        );
      const want = placeholders(original);
      const got = placeholders(value);
      if (want.join() !== got.join()) {
        const list = (names: string[], none: string) => names.map((n) => `{{${n}}}`).join(' ') || none;
        throw new PersonaFileError(
          `${where}: 「${key}」の文には ${list(want, '差し込み')} をそのまま入れてください` +
            `（いまは ${list(got, '差し込みなし')}）。`,
          `${whereEn}: the text of "${key}" must contain ${list(want, 'no placeholder')} as they are ` +
            `(it has ${list(got, 'none')}).`,
        );
      }
    }
  }
  return {
    name: p.name,
    otherNames: p.other_names ?? [],
    firstPerson: p.first_person,
    sentenceEndings: p.sentence_endings,
    tone: (p.tone ?? '')
      .split('\n')
      .map((l) => l.trim().replace(/^[-・]\s*/, ''))
      .filter(Boolean),
    base: p.base,
    messages,
  };
}

/** The persona prompt of a persona file: prompts/persona.file.md filled with its name, first person, endings, tone. */
export function personaPrompt(template: string, p: PersonaFile): string {
  return fill(template, {
    name: p.name,
    first_person: p.firstPerson,
    sentence_endings: p.sentenceEndings.map((e) => `「${e}」`).join(''),
    tone: p.tone.map((l) => `- ${l}`).join('\n'),
  })
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
