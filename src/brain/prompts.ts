import fs from 'node:fs';
import path from 'node:path';
import type { PersonaMessages } from '../core/messages';

/** Prompt texts loaded once at start from prompts/ (R-F2): persona, rules, retry guidance, persona messages. */
export interface PromptSet extends PersonaMessages {
  persona: string;
  rules: string;
  /** Rules for a public audience (public rooms, strangers): no organisation data (issue 8). */
  publicRules: string;
  guidance: Record<string, string>;
  personaName: 'soul' | 'polite';
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

export function loadPrompts(persona: 'soul' | 'polite', dir = PROMPTS_DIR): PromptSet {
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8').trim();
  return {
    persona: read(`persona.${persona}.md`),
    rules: read('system.md'),
    publicRules: read('public.md'),
    guidance: sections(read('guidance.md')),
    messages: JSON.parse(read(`messages.${persona}.json`)) as PromptSet['messages'],
    personaName: persona,
  };
}
