import type { ToolDefinition } from './types';
import type { ToolMeta } from '../core/tool-meta';

/** Tools that come and go while the service runs (MCP servers' approved tools, issue 42): the current list. */
export type ToolSource = () => readonly ToolDefinition[];

/**
 * The tool registry (R-T1, R-T2): capabilities by name, from the manifest `handlers/index.ts` (given at
 * the composition root), and the tools of any {@link ToolSource} (names `<server>__<tool>`, never a handler's:
 * a source's tool that takes a handler's name is ignored). A duplicate handler name is refused.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly sources: ToolSource[] = [];
  private lastSourced: { lists: (readonly ToolDefinition[])[]; all: ToolDefinition[] } | null = null;

  constructor(defs: readonly ToolDefinition[]) {
    for (const d of defs) {
      if (this.tools.has(d.name)) throw new Error(`duplicate tool name ${d.name}`);
      this.tools.set(d.name, d);
    }
  }

  /** Adds a source of tools (read again on every lookup: a source returns the same array until it changes). */
  addSource(source: ToolSource): void {
    this.sources.push(source);
    this.lastSourced = null;
  }

  /** Own-property lookup: a name from the model is untrusted input. */
  get(name: string): ToolDefinition | undefined {
    const own = this.tools.get(name);
    if (own) return own;
    for (const source of this.sources) {
      const hit = source().find((d) => d.name === name);
      if (hit) return hit;
    }
    return undefined;
  }

  meta(name: string): ToolMeta | undefined {
    return this.get(name);
  }

  /** Every tool by name; the same array while no source changed (the request's tool set is cached by it). */
  all(): ToolDefinition[] {
    const lists = this.sources.map((s) => s());
    const last = this.lastSourced;
    if (last && last.lists.length === lists.length && last.lists.every((l, i) => l === lists[i])) return last.all;
    const sourced = lists.flat().filter((d) => !this.tools.has(d.name));
    const all = [...this.tools.values(), ...sourced].sort((a, b) => a.name.localeCompare(b.name));
    this.lastSourced = { lists, all };
    return all;
  }
}
