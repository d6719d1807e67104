import type { ToolDefinition } from './types';
import type { ToolMeta } from '../core/tool-meta';

/**
 * The tool registry (R-T1, R-T2): capabilities by name, from the manifest `handlers/index.ts` (given at
 * the composition root). A duplicate name is refused.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();

  constructor(defs: readonly ToolDefinition[]) {
    for (const d of defs) {
      if (this.tools.has(d.name)) throw new Error(`duplicate tool name ${d.name}`);
      this.tools.set(d.name, d);
    }
  }

  /** Own-property lookup: a name from the model is untrusted input. */
  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  meta(name: string): ToolMeta | undefined {
    return this.tools.get(name);
  }

  all(): ToolDefinition[] {
    return [...this.tools.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}
