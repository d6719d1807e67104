import type { ToolProposal } from '../core/proposal';
import type { Db } from '../db/prisma';
import type { ToolMeta } from '../core/tool-meta';
import { isPublicRoom, loadActor, type Actor, type LoadActorInput } from './actor';
import { allow, deny, type AuthDecision } from './decision';
import { loadDirectory, withReferencedTasks, type Directory } from './directory';
import { isValidLevel } from './scope';
import { checkTargets, referencedTaskIds } from './targets';

/** Required level of a tool that declares none (R-Z1). */
export const DEFAULT_REQUIRED_LEVEL = 2;

/** Input of the pure gate: everything comes from the database or the tool declaration, not the LLM. */
export interface AuthorizeInput {
  actor: Actor;
  /** The declaration of `proposal.toolName` from the registry; undefined when there is none. */
  tool: ToolMeta | undefined;
  proposal: ToolProposal;
  directory: Directory;
  /** The data involved is top secret (level 6 only). */
  topSecret?: boolean;
}

/**
 * The tool's required level: the declared integer 0..6, {@link DEFAULT_REQUIRED_LEVEL} when missing,
 * and `Infinity` (nobody) when the declaration is malformed (fail-closed).
 */
export function requiredLevelOf(tool: Pick<ToolMeta, 'requiredLevel'>): number {
  const declared = tool.requiredLevel as unknown;
  if (declared === undefined || declared === null) return DEFAULT_REQUIRED_LEVEL;
  return isValidLevel(declared) ? declared : Infinity;
}

/**
 * Decides whether the actor may run the proposed tool on the data it names (R-Z1..R-Z3). Pure and
 * deterministic; independent of the Guardian's verdict. Order: actor level, tool, audience (strangers,
 * public rooms), required level, top secret, then every person and department parameter through the
 * outcome table (person-scope.ts) — which may also answer CONFIRM (ask the person first).
 */
export function authorize(input: AuthorizeInput): AuthDecision {
  const { actor, tool, proposal, directory, topSecret = false } = input;
  if (!isValidLevel(actor.level))
    return deny('Z_UNKNOWN_LEVEL', `actor level ${String(actor.level)} is not an integer 0..6`);
  if (!tool || tool.name !== proposal.toolName)
    return deny('Z_UNKNOWN_TOOL', `no tool is declared as "${proposal.toolName}"`);
  if (!tool.enabled) return deny('Z_UNKNOWN_TOOL', `tool "${tool.name}" is disabled`);
  const audience = audienceDenial(actor, tool);
  if (audience) return audience;
  const required = requiredLevelOf(tool);
  if (actor.level < required) {
    const need = Number.isFinite(required) ? `level ${required}` : 'a valid required level';
    return deny('Z_LEVEL_TOO_LOW', `"${tool.name}" needs ${need}; actor has level ${actor.level}`);
  }
  if (topSecret && actor.level < 6)
    return deny('Z_TOP_SECRET', `top-secret data needs level 6; actor has level ${actor.level}`);
  const parameters = isRecord(proposal.parameters) ? proposal.parameters : {};
  const decision = checkTargets(actor, tool, parameters, directory);
  return decision ?? allow(`level ${actor.level} may use "${tool.name}" on the named data`);
}

/**
 * Who gets no tools at all (issue 8, R-A5): a stranger (not in the directory, in a DM or an unlisted
 * room), anyone at level 0, and everyone in a room the directory marks public — a tool's result would
 * put organisation data into the room.
 */
function audienceDenial(actor: Actor, tool: ToolMeta): AuthDecision | null {
  if (actor.source === 'stranger') {
    return deny('Z_STRANGER', `the sender is not in the directory; "${tool.name}" is for members only`);
  }
  if (isPublicRoom(actor)) return deny('Z_PUBLIC_ROOM', `"${tool.name}" is not used in a public room`);
  if (actor.level === 0) return deny('Z_PUBLIC_NO_EFFECTS', `level 0 (public) may not use "${tool.name}"`);
  return null;
}

/**
 * The tools this actor may use: enabled and required level ≤ actor level; none for strangers, level 0 or
 * public rooms (see audienceDenial). An invalid actor level gets none. (What the model is offered is
 * {@link offeredToolsForActor}: the same list for every member.)
 */
export function filterToolsForActor<T extends ToolMeta>(
  actor: Pick<Actor, 'level' | 'roomAuthority' | 'roomListed' | 'source'>,
  tools: readonly T[],
): T[] {
  return offeredToolsForActor(actor, tools).filter((t) => requiredLevelOf(t) <= actor.level);
}

/**
 * The tools offered to the LLM (issue 10): every enabled tool, in one list and order, for every sender who
 * may be offered tools at all — so the cached prompt prefix (system + tools) is byte-identical across the
 * senders of an organisation. None for strangers, level 0 or public rooms. Offering is not permission:
 * {@link authorize} decides each proposal from the sender's level and scope, and the context tells the
 * model which tools the sender may not use ({@link toolsAboveActor}).
 */
export function offeredToolsForActor<T extends ToolMeta>(
  actor: Pick<Actor, 'level' | 'roomAuthority' | 'roomListed' | 'source'>,
  tools: readonly T[],
): T[] {
  if (!isValidLevel(actor.level) || actor.level === 0 || isPublicRoom(actor) || actor.source === 'stranger') return [];
  return tools.filter((t) => t.enabled);
}

/** Offered tools this sender may not use (required level above theirs): named in the turn's context. */
export function toolsAboveActor<T extends ToolMeta>(
  actor: Pick<Actor, 'level' | 'roomAuthority' | 'roomListed' | 'source'>,
  tools: readonly T[],
): T[] {
  return offeredToolsForActor(actor, tools).filter((t) => requiredLevelOf(t) > actor.level);
}

/** Input of {@link authorizeWithLookup}: who is asking, where, and what. */
export interface AuthorizeWithLookupInput extends LoadActorInput {
  tool: ToolMeta | undefined;
  proposal: ToolProposal;
  topSecret?: boolean;
  /** The organisation directory when the caller keeps it cached; read from the database when absent. */
  directory?: (orgId: string) => Promise<Directory>;
  /** The actor when the caller read it from the database in this turn already; loaded when absent. */
  actor?: Actor;
  /** Called with the error when a lookup fails (for logging); the decision is DENIED either way. */
  onError?: (err: unknown) => void;
}

/**
 * Loads the actor and the directory from the database and runs {@link authorize} (the decision names the
 * actor it was made for). Any exception
 * (database down, bad data) yields DENIED `Z_LOOKUP_ERROR` (fail-closed, R-Z2).
 */
export async function authorizeWithLookup(
  db: Pick<Db, 'platformAccount' | 'room' | 'department' | 'member' | 'task'>,
  input: AuthorizeWithLookupInput,
): Promise<AuthDecision & { actor: Actor | null }> {
  try {
    const base = input.directory ? input.directory(input.orgId) : loadDirectory(db, input.orgId);
    const [actor, directoryBase] = await Promise.all([input.actor ?? loadActor(db, input), base]);
    const directory = await directoryFor(db, input.orgId, directoryBase, input.tool, input.proposal);
    const decision = authorize({
      actor,
      tool: input.tool,
      proposal: input.proposal,
      directory,
      topSecret: input.topSecret,
    });
    return { ...decision, actor };
  } catch (err) {
    try {
      input.onError?.(err);
    } catch {
      // a failing logger must not turn a denial into anything else
    }
    const name = err instanceof Error ? err.name : typeof err;
    return { ...deny('Z_LOOKUP_ERROR', `authorization lookup failed (${name}); denied fail-closed`), actor: null };
  }
}

/** The directory with what this proposal's `task` parameters need (their owners). Errors propagate. */
export async function directoryFor(
  db: Pick<Db, 'task'>,
  orgId: string,
  directory: Directory,
  tool: ToolMeta | undefined,
  proposal: ToolProposal,
): Promise<Directory> {
  if (!tool || !isRecord(proposal.parameters)) return directory;
  return withReferencedTasks(db, orgId, directory, referencedTaskIds(tool, proposal.parameters));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
