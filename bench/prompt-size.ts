/**
 * The real model request of a turn, built by the service's own functions (brainInput → decisionRequest → the
 * Anthropic adapter), for measuring what every request costs: the cacheable prefix (the loaded tools and the
 * system block) and the whole body, in bytes and tokens. Used by `scripts/measure-prompt.ts`; reusable wherever a
 * cost is estimated (the benchmark's yen per conversation).
 *
 * Tokens are counted with `@anthropic-ai/tokenizer` (the Claude tokenizer published by Anthropic for older
 * models): an approximation of what the API bills for the current ones (Anthropic: the 4.7+ tokenizer counts
 * ≈ 30 % more for the same text than Haiku 4.5's). Use it to compare versions of the prompt, not as the bill.
 */
import fs from 'node:fs';
import path from 'node:path';
import { countTokens } from '@anthropic-ai/tokenizer';
import { toAnthropicRequest, type AnthropicRequest } from '../src/brain/anthropic-client';
import { decisionRequest } from '../src/brain/brain';
import { loadPrompts } from '../src/brain/prompts';
import type { TurnContext } from '../src/context/types';
import { parseDirectory } from '../src/org/parse-directory';
import { brainInput } from '../src/turn/proposal-stage';
import type { Actor } from '../src/authorization/actor';
import { ToolRegistry, type ToolSource } from '../src/tools/registry';
import { handlers } from '../handlers';

export const SAMPLE_DIRECTORY = path.resolve(__dirname, '..', 'config', 'org.sample.yaml');

export interface TurnRequestInput {
  /** The sender's level (1–6), or 0 for a public audience. Default 2. */
  level?: number;
  /** The message. Default 「おはよう」. */
  message?: string;
  /** The organisation directory file (its name, values and policies make the system block). Default the sample. */
  directoryFile?: string;
  persona?: 'soul' | 'polite';
  /** Tools beside the handlers' (MCP tools, issue 42), as the service's registry takes them. */
  toolSources?: readonly ToolSource[];
  model?: string;
  maxTokens?: number;
}

/** The Messages API body the service sends for the first model call of a member's turn. */
export function turnRequest(o: TurnRequestInput = {}): AnthropicRequest {
  const level = o.level ?? 2;
  const file = o.directoryFile ?? SAMPLE_DIRECTORY;
  const parsed = parseDirectory(fs.readFileSync(file, 'utf8'), file);
  if (!parsed.ok) throw new Error(`${file}: ${parsed.errors.join('; ')}`);
  const d = parsed.directory;
  const publicAudience = level === 0;
  const actor: Actor = {
    known: !publicAudience,
    memberId: publicAudience ? null : 'member',
    name: '山田一郎',
    level,
    departmentId: null,
    roomAuthority: publicAudience ? 'public' : 'member',
    roomListed: true,
    source: publicAudience ? 'public_unknown' : 'directory',
  };
  const ctx: TurnContext = {
    org: {
      id: d.organization.id,
      name: d.organization.name,
      timezone: d.organization.timezone ?? 'Asia/Tokyo',
      values: d.organization.values ?? '',
    },
    policies: d.policies.map((p) => ({ id: p.id, title: p.title, content: p.content })),
    sender: {
      known: actor.known,
      memberId: actor.memberId,
      name: '山田一郎',
      level,
      departmentId: null,
      departmentName: '営業部',
      title: null,
      preferences: {},
    },
    room: { platform: 'chatwork', roomId: '1001', name: '営業部', authority: actor.roomAuthority },
    audience: publicAudience ? 'public' : 'member',
    history: [],
    summary: null,
    now: new Date('2026-11-24T01:00:00Z'),
    nowText: '2026年11月24日(火) 10:00 (Asia/Tokyo)',
    message: {
      platform: 'chatwork',
      orgId: d.organization.id,
      roomId: '1001',
      senderAccountId: '1',
      text: o.message ?? 'おはよう',
      rawText: '',
      mentions: [],
      platformMessageId: '1',
      sentAt: '',
    },
    language: 'ja',
    sections: [],
    degraded: [],
  } as TurnContext;
  const registry = new ToolRegistry(handlers);
  for (const source of o.toolSources ?? []) registry.addSource(source);
  const input = brainInput(ctx, actor, registry);
  const neutral = decisionRequest(
    loadPrompts(o.persona ?? 'soul'),
    input,
    o.model ?? 'claude-opus-5-5',
    o.maxTokens ?? 4096,
  );
  return toAnthropicRequest(neutral);
}

/** The cacheable prefix of a request: its loaded tools (deferred ones are not in the prompt) and system block. */
export function prefixOf(req: AnthropicRequest): { tools: string; system: string } {
  const loaded = req.tools.filter((t) => !(t as { defer_loading?: boolean }).defer_loading);
  return { tools: JSON.stringify(loaded), system: req.system.map((b) => b.text).join('\n') };
}

/** Bytes (UTF-8) and tokens (the Claude tokenizer, an approximation) of a text. */
export function size(text: string): { bytes: number; tokens: number } {
  return { bytes: Buffer.byteLength(text, 'utf8'), tokens: countTokens(text) };
}

/** The sizes a cost estimate needs: the prefix (tools, system, together) and the whole body. */
export function requestSizes(req: AnthropicRequest): {
  prefix: { bytes: number; tokens: number };
  tools: { bytes: number; tokens: number };
  system: { bytes: number; tokens: number };
  body: { bytes: number };
  loaded: string[];
  deferred: string[];
} {
  const p = prefixOf(req);
  const tools = size(p.tools);
  const system = size(p.system);
  const deferred = req.tools.filter((t) => (t as { defer_loading?: boolean }).defer_loading).map((t) => t.name);
  return {
    prefix: { bytes: tools.bytes + system.bytes, tokens: tools.tokens + system.tokens },
    tools,
    system,
    body: { bytes: Buffer.byteLength(JSON.stringify(req), 'utf8') },
    loaded: req.tools.map((t) => t.name).filter((n) => !deferred.includes(n)),
    deferred,
  };
}
