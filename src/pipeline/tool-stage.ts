import type { ToolSpec } from '../brain/tool-definitions';
import type { Actor } from '../authorization';
import type { BrainDecision } from '../brain/brain';
import type { TurnContext } from '../context/types';
import type { ClaimedItem } from '../intake/work-queue';
import type { PendingActionView } from '../state/types';
import type { TurnOutcome, TurnRunner } from './turn-runner';

/** The proposal half of a turn: tools offered to the LLM, and what happens to what it proposes. */
export interface ToolStage {
  /** Anthropic tool definitions this sender may be offered (filtered by level). */
  toolsFor(actor: Actor): ToolSpec[];
  /** `modifying`: the pending action this turn changes; any proposal with effects is then asked again, never run. */
  run(input: {
    ctx: TurnContext; actor: Actor; decision: BrainDecision; item: ClaimedItem; turnRunner: TurnRunner;
    modifying?: PendingActionView;
  }): Promise<TurnOutcome>;
}
