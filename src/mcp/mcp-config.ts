import { ENV_REFERENCE } from '../core/mcp-names';
import type { McpServerSection } from '../org/directory.schema';

/** How to reach a server, with every `${NAME}` resolved (secrets: never logged, never shown). */
export type McpTransportSpec =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  | { kind: 'http'; url: string; headers: Record<string, string> };

/** One declared server, ready to connect. */
export interface McpServerSpec {
  id: string;
  /** In the operator's words (「共有ドライブ」); the id when the section names none. */
  name: string;
  transport: McpTransportSpec;
  timeoutMs: number;
  /** The tools the organisation allows, by the name the server lists them under. */
  tools: McpServerSection['tools'];
}

/** A call's time limit when the section gives none. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The server of a directory section with its `${NAME}` references taken from `env` (checked at parse time: an
 * unset one stops start-up with the file and line). A stdio server's environment is only what the SDK passes
 * (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`) plus what the section lists: none of Hisho's own
 * secrets (the model key, the platform tokens, `DATABASE_URL`).
 */
export function serverSpec(s: McpServerSection, env: Readonly<Record<string, string | undefined>>): McpServerSpec {
  const resolve = (v: string) => v.replace(ENV_REFERENCE, (_, name: string) => env[name] ?? '');
  const map = (r: Record<string, string> | undefined) =>
    Object.fromEntries(Object.entries(r ?? {}).map(([k, v]) => [k, resolve(v)]));
  const transport: McpTransportSpec =
    s.command !== undefined
      ? { kind: 'stdio', command: resolve(s.command), args: (s.args ?? []).map(resolve), env: map(s.env) }
      : { kind: 'http', url: resolve(s.url!), headers: map(s.headers) };
  return {
    id: s.id,
    name: s.name ?? s.id,
    transport,
    timeoutMs: s.timeout_seconds !== undefined ? Math.round(s.timeout_seconds * 1000) : DEFAULT_TIMEOUT_MS,
    tools: s.tools,
  };
}
