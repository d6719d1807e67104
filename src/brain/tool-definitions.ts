import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import type { ToolDefinition } from '../tools/types';
import { capabilityInputSchema } from './output';

/** What the brain needs of a capability to offer it to the model (its declaration in handlers/). */
export type ToolSpec = Pick<ToolDefinition, 'name' | 'description' | 'triggerExamples' | 'input'>;

const cache = new WeakMap<ToolSpec, Anthropic.Messages.Tool>();

/**
 * The Anthropic definition of a capability: description + trigger examples, and the meta-wrapped input
 * schema (reasoning, confidence, summary, parameters). Built once per declaration: it is part of the
 * cached prompt prefix, so it must not change between turns.
 */
export function anthropicTool(spec: ToolSpec): Anthropic.Messages.Tool {
  const hit = cache.get(spec);
  if (hit) return hit;
  const params = z.toJSONSchema(spec.input, { target: 'draft-2020-12' }) as Record<string, unknown>;
  delete params.$schema;
  const examples = spec.triggerExamples.map((e) => `「${e}」`).join(' ');
  const tool: Anthropic.Messages.Tool = {
    name: spec.name,
    description: `${spec.description}\nExamples: ${examples}`,
    input_schema: capabilityInputSchema(params),
  };
  cache.set(spec, tool);
  return tool;
}
