/**
 * The table-driven rule runner: rules are grouped by priority; inside a tier every rule is evaluated
 * and traced and the strictest enforced hit wins (BLOCK > CONFIRM double > CONFIRM single > MODIFY);
 * the first tier with a BLOCK or CONFIRM decides and lower tiers are not evaluated (seed 003 §5.3.3b).
 */
import { severityOf, type BlockVerdict, type ConfirmVerdict, type ModifyVerdict, type RuleTrace } from './verdict';

type WithoutTrace<V> = V extends unknown ? Omit<V, 'trace' | 'modifiedParameters'> : never;
/** A rule that stops the call or asks first: a BLOCK or CONFIRM verdict without its trace. */
export type DecidingHit = WithoutTrace<BlockVerdict | ConfirmVerdict>;
/** A rule that fixed parameters: a MODIFY verdict without its trace and parameters. */
export type ModifyHit = WithoutTrace<ModifyVerdict>;
/** What a rule reports when it objects or fixes something. */
export type RuleHit = DecidingHit | ModifyHit;

/** One row of a rule table. */
export interface Rule<C> {
  /** Stable name (trace and `shadowRules`). */
  name: string;
  /** What the rule checks, in Japanese, for operator screens (/admin's inspector). */
  label: string;
  priority: number;
  /** Statically a shadow rule (e.g. a policy marked `shadow: true`). */
  shadow?: boolean;
  /** False for rules that must always be enforced (tool existence). */
  shadowable?: boolean;
  check(ctx: C): RuleHit | null;
}

/** Result of {@link runRules}: the deciding BLOCK/CONFIRM, if any, and the first enforced MODIFY. */
export interface RunResult {
  decided?: DecidingHit;
  modify?: ModifyHit;
}

const confirmationOf = (h: RuleHit) => (h.action === 'CONFIRM' ? h.confirmationType : undefined);

function strictest(a: RuleHit | undefined, b: RuleHit): RuleHit {
  if (!a) return b;
  return severityOf(b.action, confirmationOf(b)) > severityOf(a.action, confirmationOf(a)) ? b : a;
}

/**
 * Runs `rules` in priority order (stable inside a tier), appending to `trace`. A rule is shadowed when
 * it is statically a shadow rule or when `shadowRules` names it or the reason code it produced.
 */
export function runRules<C>(
  rules: readonly Rule<C>[],
  ctx: C,
  shadowRules: readonly string[],
  trace: RuleTrace[],
): RunResult {
  const tiers = [...new Set(rules.map((r) => r.priority))].sort((a, b) => a - b);
  let modify: ModifyHit | undefined;
  for (const priority of tiers) {
    let winner: RuleHit | undefined;
    for (const rule of rules.filter((r) => r.priority === priority)) {
      const hit = rule.check(ctx);
      const shadowed =
        rule.shadowable !== false &&
        (rule.shadow === true ||
          shadowRules.includes(rule.name) ||
          (hit !== null && shadowRules.includes(hit.reasonCode)));
      trace.push({
        rule: rule.name,
        priority,
        outcome: hit?.action ?? 'PASS',
        enforced: !shadowed,
        ...(hit ? { reasonCode: hit.reasonCode } : {}),
      });
      if (hit && !shadowed) winner = strictest(winner, hit);
    }
    if (winner && winner.action !== 'MODIFY') return { decided: winner, ...(modify ? { modify } : {}) };
    if (winner) modify ??= winner;
  }
  return modify ? { modify } : {};
}

/** The verdict of a deciding hit; a CONFIRM carries the normalised parameters its confirmed call runs with. */
export function verdictFromHit(
  hit: DecidingHit,
  trace: RuleTrace[],
  modifiedParameters?: Record<string, unknown>,
): BlockVerdict | ConfirmVerdict {
  if (hit.action === 'BLOCK') return { ...hit, trace };
  return { ...hit, ...(modifiedParameters ? { modifiedParameters } : {}), trace };
}
