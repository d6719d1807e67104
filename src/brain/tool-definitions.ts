import { z } from 'zod';
import type { ToolDefinition } from '../tools/types';
import type { LlmTool } from './llm-client';
import { capabilityInputSchema } from './output';

/**
 * What the brain needs of a capability to offer it to the model (its declaration in handlers/): what the model
 * reads, and the level it needs (a tool search never finds a tool above the sender's level).
 */
export type ToolSpec = Pick<
  ToolDefinition,
  'name' | 'description' | 'triggerExamples' | 'input' | 'requiredLevel' | 'inputJsonSchema'
>;

const cache = new WeakMap<ToolSpec, LlmTool>();

/**
 * The model's definition of a capability: description + trigger examples, and the meta-wrapped input
 * schema (reasoning, confidence, summary, parameters). Built once per declaration: it is part of the
 * cached prompt prefix, so it must not change between turns.
 */
export function modelTool(spec: ToolSpec): LlmTool {
  const hit = cache.get(spec);
  if (hit) return hit;
  const params = compact(spec.inputJsonSchema ?? z.toJSONSchema(spec.input, { target: 'draft-2020-12' })) as Record<
    string,
    unknown
  >;
  delete params.$schema;
  // One example is enough to anchor the tool; each byte here is sent with every request of the organisation.
  const examples = spec.triggerExamples
    .slice(0, 1)
    .map((e) => `「${e}」`)
    .join(' ');
  const tool: LlmTool = {
    name: spec.name,
    description: examples ? `${spec.description}\nExamples: ${examples}` : spec.description,
    inputSchema: capabilityInputSchema(params),
  };
  cache.set(spec, tool);
  return tool;
}

/**
 * A parameter schema without what only the handler's own validation needs (string lengths, `additionalProperties`):
 * the handler checks its input with the full zod schema anyway; the model reads types, enums and descriptions.
 */
function compact(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compact);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'minLength' || k === 'maxLength' || k === 'additionalProperties') continue;
    // `properties` maps parameter names (kept, whatever they are) to schemas (compacted).
    out[k] =
      k === 'properties' && v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([name, schema]) => [name, compact(schema)]))
        : compact(v);
  }
  return out;
}
