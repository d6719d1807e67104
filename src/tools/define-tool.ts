import { z } from 'zod';
import type { ToolDefinition } from './types';

/** Tool names the model sees: snake_case, ≤ 64 chars, not a meta-tool name. */
const NAME = /^[a-z][a-z0-9_]{1,63}$/;
const RESERVED = new Set(['reply', 'ask_clarification', 'find_tools']);

/**
 * Declares a capability (R-T1). Checked at definition time: a valid name, an object input schema that
 * converts to JSON Schema, a level in 1..6, and trigger examples. Defaults: required level 2, enabled.
 */
export function defineTool<I extends z.ZodObject, O extends z.ZodType>(
  def: Omit<ToolDefinition<I, O>, 'requiredLevel' | 'enabled' | 'requiresConfirmation'> &
    Partial<Pick<ToolDefinition<I, O>, 'requiredLevel' | 'enabled' | 'requiresConfirmation'>>,
): ToolDefinition<I, O> {
  if (!NAME.test(def.name) || RESERVED.has(def.name))
    throw new Error(`tool name "${def.name}" must be snake_case and not reserved`);
  const level = def.requiredLevel ?? 2;
  if (!Number.isInteger(level) || level < 0 || level > 6)
    throw new Error(`tool ${def.name}: requiredLevel must be 0..6`);
  const schema = z.toJSONSchema(def.input, { target: 'draft-2020-12' }) as { type?: string };
  if (schema.type !== 'object') throw new Error(`tool ${def.name}: input schema must be an object`);
  if (def.effects.length > 0 && !def.effectKind)
    throw new Error(`tool ${def.name}: a tool with effects declares its effectKind (what a reply may say it did)`);
  if (def.triggerExamples.length === 0) throw new Error(`tool ${def.name}: give at least one trigger example`);
  return {
    ...def,
    requiredLevel: level,
    enabled: def.enabled ?? true,
    requiresConfirmation: def.requiresConfirmation ?? false,
  };
}
