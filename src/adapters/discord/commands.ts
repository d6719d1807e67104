/**
 * Hisho's Discord application commands (issue 44): `/hisho request:<text> public:<bool>` and the message command
 * "Ask Hisho", English by default with Japanese localizations; and their registration at start, per allow-listed
 * guild (docs/decisions/0014-discord-commands-per-guild.md): the registered commands are read first and written
 * (one PUT) only when they differ, under a lock the instances share, so two instances starting together, or a
 * restart, register them once.
 */
import { Routes, type REST } from 'discord.js';
import type { Logger } from '../../observability/logger';
import { summarizeError } from './error-summary';

/** The chat-input command and its options. */
export const HISHO_COMMAND = 'hisho';
export const REQUEST_OPTION = 'request';
export const PUBLIC_OPTION = 'public';
/** The message command (right-click on a message → Apps). */
export const ASK_HISHO_COMMAND = 'Ask Hisho';

/** Discord's command types and option types used here. */
const CHAT_INPUT = 1;
const MESSAGE = 3;
const STRING = 3;
const BOOLEAN = 5;

/** An application command as Discord's API takes it (the fields Hisho sets). */
export interface CommandDefinition {
  type: number;
  name: string;
  description: string;
  name_localizations?: Record<string, string>;
  description_localizations?: Record<string, string>;
  options?: {
    type: number;
    name: string;
    description: string;
    required?: boolean;
    max_length?: number;
    name_localizations?: Record<string, string>;
    description_localizations?: Record<string, string>;
  }[];
}

/** The commands Hisho registers. */
export const COMMAND_DEFINITIONS: readonly CommandDefinition[] = [
  {
    type: CHAT_INPUT,
    name: HISHO_COMMAND,
    description: 'Ask Hisho (only you see the answer unless public is true)',
    description_localizations: { ja: 'Hishoに頼む（公開をtrueにしない限り、あなたにだけ見えます）' },
    options: [
      {
        type: STRING,
        name: REQUEST_OPTION,
        description: 'What you would like Hisho to do',
        required: true,
        max_length: 2000,
        name_localizations: { ja: '依頼' },
        description_localizations: { ja: 'お願いしたいこと' },
      },
      {
        type: BOOLEAN,
        name: PUBLIC_OPTION,
        description: 'Show the request and the answer to the whole channel',
        required: false,
        name_localizations: { ja: '公開' },
        description_localizations: { ja: 'チャンネルの全員に依頼と答えを見せる' },
      },
    ],
  },
  // Message commands have no description (Discord requires an empty one).
  { type: MESSAGE, name: ASK_HISHO_COMMAND, description: '', name_localizations: { ja: 'Hishoに頼む' } },
];

/** What decides whether a registered command is ours as defined (ids, versions and defaults aside). */
function comparable(c: Partial<CommandDefinition>): string {
  const loc = (l: Record<string, string> | null | undefined) =>
    Object.entries(l ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify({
    type: c.type ?? CHAT_INPUT,
    name: c.name,
    description: c.description ?? '',
    nl: loc(c.name_localizations),
    dl: loc(c.description_localizations),
    options: (c.options ?? []).map((o) => ({
      type: o.type,
      name: o.name,
      description: o.description,
      required: o.required ?? false,
      max_length: o.max_length ?? null,
      nl: loc(o.name_localizations),
      dl: loc(o.description_localizations),
    })),
  });
}

/** True when the registered list is exactly our commands (in any order). */
export function sameCommands(registered: readonly Partial<CommandDefinition>[], wanted = COMMAND_DEFINITIONS): boolean {
  const a = registered.map(comparable).sort();
  const b = wanted.map(comparable).sort();
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Runs `fn` while holding a lock every instance shares (the database's advisory lock). */
export type SharedLock = <T>(fn: () => Promise<T>) => Promise<T>;

/**
 * Makes each allow-listed guild's commands {@link COMMAND_DEFINITIONS}: per guild, reads them (with their
 * localizations) and writes them in one PUT only when they differ. Never throws: a guild that fails (the bot is
 * not in it: 403) is logged and the others go on.
 *
 * @returns Per guild: `registered` (written now), `unchanged`, or `failed`.
 */
export async function registerCommands(d: {
  rest: Pick<REST, 'get' | 'put'>;
  applicationId: string;
  guildIds: readonly string[];
  lock: SharedLock;
  logger: Logger;
}): Promise<Record<string, 'registered' | 'unchanged' | 'failed'>> {
  const result: Record<string, 'registered' | 'unchanged' | 'failed'> = {};
  const names = COMMAND_DEFINITIONS.map((c) => c.name);
  for (const guildId of d.guildIds) {
    const route = Routes.applicationGuildCommands(d.applicationId, guildId);
    try {
      result[guildId] = await d.lock(async () => {
        const query = new URLSearchParams({ with_localizations: 'true' });
        const current = (await d.rest.get(route, { query })) as Partial<CommandDefinition>[];
        if (sameCommands(current)) return 'unchanged';
        await d.rest.put(route, { body: COMMAND_DEFINITIONS });
        return 'registered';
      });
      if (result[guildId] === 'registered') d.logger.info({ guildId, commands: names }, 'discord commands registered');
      else d.logger.info({ guildId, commands: names }, 'discord commands already registered');
    } catch (err) {
      result[guildId] = 'failed';
      d.logger.warn({ guildId, error: summarizeError(err) }, 'discord command registration failed');
    }
  }
  if (d.guildIds.length === 0) d.logger.info('no allow-listed Discord guild: no commands registered');
  return result;
}
