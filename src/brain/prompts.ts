import fs from 'node:fs';
import path from 'node:path';
import type { PersonaMessages } from '../core/messages';
import { personaPrompt, readPersonaFile } from './persona-file';

/** Prompt texts loaded once at start from prompts/ (R-F2): persona, rules, retry guidance, persona messages. */
export interface PromptSet extends PersonaMessages {
  persona: string;
  rules: string;
  /** Rules for a public audience (public rooms, strangers): no organisation data (issue 8). */
  publicRules: string;
  guidance: Record<string, string>;
  /** The built-in persona, or the one a persona file starts from. */
  personaName: 'soul' | 'polite';
  /** A persona file's own sentence endings (「ニャ」): the reply check reads them as the end of a statement. */
  sentenceEndings: readonly string[];
}

export const PROMPTS_DIR = path.resolve(__dirname, '..', '..', 'prompts');

/** Splits a markdown file into `## name` sections. */
function sections(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let current: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^## (\S+)\s*$/.exec(line);
    if (m) {
      current = m[1]!;
      out[current] = '';
    } else if (current) {
      out[current] += line + '\n';
    }
  }
  for (const k of Object.keys(out)) out[k] = out[k]!.trim();
  return out;
}

/**
 * The prompts of a built-in persona, or of a persona file (PERSONA_FILE, ./persona-file.ts) on top of the built-in
 * persona it names as its base. A persona file that cannot be used throws a PersonaFileError.
 */
export function loadPrompts(persona: 'soul' | 'polite', dir = PROMPTS_DIR, personaFile?: string): PromptSet {
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8').trim();
  const messagesOf = (p: 'soul' | 'polite') => JSON.parse(read(`messages.${p}.json`)) as PromptSet['messages'];
  const common = { rules: read('system.md'), publicRules: read('public.md'), guidance: sections(read('guidance.md')) };
  if (!personaFile)
    return {
      ...common,
      persona: read(`persona.${persona}.md`),
      messages: messagesOf(persona),
      personaName: persona,
      sentenceEndings: [],
    };
  const own = readPersonaFile(personaFile, messagesOf);
  const base = messagesOf(own.base);
  const names = [own.name, ...own.otherNames, ...(base.ja['bot.names'] ?? '').split(',')].filter(Boolean);
  const botNames = [...new Set(names)].join(',');
  const messages = {
    ja: { ...base.ja, ...own.messages.ja, 'bot.names': botNames },
    en: { ...base.en, ...own.messages.en, 'bot.names': botNames },
  };
  return {
    ...common,
    persona: personaPrompt(read('persona.file.md'), own),
    messages,
    personaName: own.base,
    sentenceEndings: own.sentenceEndings,
  };
}
