/**
 * Settings of the knowledge import (read by `npm run knowledge:import`, documented in .env.example).
 * A bad value stops the import with a message naming the variable (never guessing a value).
 */
export interface KnowledgeConfig {
  /** Files larger than this are skipped (KNOWLEDGE_MAX_BYTES, default 1 MB). */
  maxBytes: number;
  /** Level of a document whose front matter names none (KNOWLEDGE_DEFAULT_LEVEL, default 2). */
  defaultLevel: number;
}

export const DEFAULT_KNOWLEDGE_MAX_BYTES = 1024 * 1024;
export const DEFAULT_KNOWLEDGE_LEVEL = 2;

/** From an environment (the import passes `environment()` of src/config/env.ts: process env over `.env`). */
export function knowledgeConfig(env: Record<string, string | undefined>): KnowledgeConfig {
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new Error(`${name} must be a whole number from ${min} to ${max}`);
    }
    return n;
  };
  return {
    maxBytes: int('KNOWLEDGE_MAX_BYTES', DEFAULT_KNOWLEDGE_MAX_BYTES, 1, 1024 * 1024 * 1024),
    defaultLevel: int('KNOWLEDGE_DEFAULT_LEVEL', DEFAULT_KNOWLEDGE_LEVEL, 1, 6),
  };
}
