import fs from 'node:fs';
import path from 'node:path';
import type { ToolDefinition } from './types';
import type { ToolMeta } from '../core/tool-meta';

export const HANDLERS_DIR = path.resolve(__dirname, '..', '..', 'handlers');

function isToolDefinition(v: unknown): v is ToolDefinition {
  const t = v as Partial<ToolDefinition>;
  return !!t && typeof t === 'object' && typeof t.name === 'string' && typeof t.handler === 'function' && !!t.input && Array.isArray(t.effects);
}

/**
 * The tool registry (R-T1, R-T2). Capabilities are discovered from `handlers/` (every exported
 * definition of every file not starting with `_`), so adding a tool touches no other file.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();

  constructor(defs: ToolDefinition[]) {
    for (const d of defs) {
      if (this.tools.has(d.name)) throw new Error(`duplicate tool name ${d.name}`);
      this.tools.set(d.name, d);
    }
  }

  /** Loads every capability file from a folder. */
  static fromDirectory(dir = HANDLERS_DIR): ToolRegistry {
    const defs: ToolDefinition[] = [];
    const files = fs.readdirSync(dir).filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts') && !f.startsWith('_') && !f.startsWith('index.')).sort();
    for (const f of files) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mod = require(path.join(dir, f)) as Record<string, unknown>;
      for (const v of Object.values(mod)) {
        if (Array.isArray(v)) defs.push(...v.filter(isToolDefinition));
        else if (isToolDefinition(v)) defs.push(v);
      }
    }
    return new ToolRegistry(defs);
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
