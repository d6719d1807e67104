/**
 * Scripted model answers and their encoding as the Messages API sends them: streamed (PLATFORMS.md C6) or,
 * for a request without `stream: true`, as one JSON message. Shared by the nock fake (in-process tests) and
 * the HTTP fake server (child processes, eval, proof); no nock here.
 */

/** One scripted model answer: content blocks plus stop reason, or an HTTP error. */
export type ScriptedAnswer =
  /** `delayMs`: the model takes that long to answer (the console's typing indicator shows meanwhile). */
  | { content: ScriptedBlock[]; stop_reason?: string; usage?: Partial<Usage>; delayMs?: number }
  | { status: number; errorType: string; headers?: Record<string, string>; delayMs?: number }
  | { hangMs: number }
  /**
   * An answer that breaks off. Streamed: the stream starts, then an `event: error` (e.g. overloaded_error)
   * or an abrupt end. Not streamed: the first half of the JSON message, then the connection closes.
   */
  | { streamBreak: 'error_event' | 'truncated' };

export type ScriptedBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'tool_use'; id?: string; name: string; input: unknown };

interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

let seq = 0;

/** A reply meta-tool call with valid reasoning and confidence (the compact envelope, prompts/system.md). */
export function replyCall(text: string, overall = 0.9): ScriptedAnswer {
  return {
    content: [
      { type: 'thinking', thinking: '' },
      {
        type: 'tool_use',
        name: 'reply',
        input: {
          reasoning: 'The person is greeting me and wants a friendly answer; conversation only.',
          confidence: overall,
          text,
        },
      },
    ],
  };
}

export function clarifyCall(question: string, options: string[]): ScriptedAnswer {
  return {
    content: [
      {
        type: 'tool_use',
        name: 'ask_clarification',
        input: {
          reasoning: 'The person asked for something that has several possible targets: which person is meant.',
          confidence: 0.5,
          question,
          options,
        },
      },
    ],
  };
}

export function toolCall(
  name: string,
  parameters: Record<string, unknown>,
  opts: { overall?: number; reasoning?: string } = {},
): ScriptedAnswer {
  return {
    content: [
      {
        type: 'tool_use',
        name,
        input: {
          reasoning: opts.reasoning ?? `The person asks me to do this action with these parameters: ${name}.`,
          confidence: opts.overall ?? 0.9,
          summary: `${name} as asked.`,
          parameters,
          sources: Object.fromEntries(Object.keys(parameters).map((k) => [k, 'user_message'])),
        },
      },
    ],
  };
}

type Answered = Extract<ScriptedAnswer, { content: ScriptedBlock[] }>;

const usageOf = (answer: Answered): Usage => ({
  input_tokens: 900,
  output_tokens: 120,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 2400,
  ...(answer.usage ?? {}),
});

const stopOf = (answer: Answered): string =>
  answer.stop_reason ?? (answer.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');

/** True when a request body asks for a streamed answer (`stream: true`); the SDK's `create` sends `false`. */
function wantsStream(body: unknown): boolean {
  return (body as { stream?: unknown } | null)?.stream === true;
}

/** The JSON body of a successful answer to a request that was not streamed (the API's `Message`). */
function messageJson(answer: Answered, model: string): string {
  const id = `msg_${++seq}`;
  const content = answer.content.map((b, index) => {
    if (b.type === 'text') return { type: 'text', text: b.text, citations: null };
    if (b.type === 'thinking') return { type: 'thinking', thinking: b.thinking, signature: 'sig' };
    return { type: 'tool_use', id: b.id ?? `toolu_${seq}_${index}`, name: b.name, input: b.input };
  });
  return JSON.stringify({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopOf(answer),
    stop_sequence: null,
    usage: usageOf(answer),
  });
}

/**
 * The first half of a plain answer's JSON (an announcement to everyone): what arrives of it when the
 * connection closes halfway.
 */
function cutMessageJson(model: string): string {
  const whole = messageJson(toolCall('announce', { recipients: 'all', text: '全員に連絡です' }) as Answered, model);
  return whole.slice(0, whole.length >> 1);
}

/** One server-sent event as the API writes it (its `type` repeated in the data). */
const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** The message of a `message_start` event: no content yet, no stop reason. */
const startedMessage = (id: string, model: string, usage: object) => ({
  id,
  type: 'message',
  role: 'assistant',
  model,
  content: [],
  stop_reason: null,
  stop_sequence: null,
  usage,
});

/**
 * A streamed answer that breaks off inside a tool call (an announcement to everyone, half written): an
 * `event: error` (overloaded_error) or nothing more before the connection closes.
 */
function brokenStream(kind: 'error_event' | 'truncated', model: string): string {
  const message = startedMessage('msg_x', model, { input_tokens: 10, output_tokens: 1 });
  const block = { type: 'tool_use', id: 'toolu_x', name: 'announce', input: {} };
  const delta = { type: 'input_json_delta', partial_json: '{"parameters":{"recipients":"all"' };
  const start =
    event('message_start', { message }) +
    event('content_block_start', { index: 0, content_block: block }) +
    event('content_block_delta', { index: 0, delta });
  const overloaded = { error: { type: 'overloaded_error', message: 'Overloaded' } };
  return kind === 'error_event' ? start + event('error', overloaded) : start;
}

/** A 200 answer as the API sends it to this request, for both fakes. */
export interface OkBody {
  text: string;
  contentType: string;
  requestId?: string;
  /** A plain answer that breaks off: the connection closes after `text`, half of the message. */
  cut: boolean;
}

/**
 * The body of a 200 answer to `request`: streamed when it asked for `stream: true`, else one JSON message. A
 * scripted break is a stream that breaks off, or for a plain request half of the message.
 */
export function okBody(
  answer: Answered | Extract<ScriptedAnswer, { streamBreak: unknown }>,
  request: unknown,
  model: string,
): OkBody {
  const streamed = wantsStream(request);
  const contentType = streamed ? 'text/event-stream' : 'application/json';
  if ('streamBreak' in answer)
    return {
      text: streamed ? brokenStream(answer.streamBreak, model) : cutMessageJson(model),
      contentType,
      cut: !streamed,
    };
  const text = streamed ? sse(answer, model) : messageJson(answer, model);
  return { text, contentType, requestId: `req_${seq}`, cut: false };
}

/** The SSE body of a successful streamed answer (tool input split over two deltas, as the API does). */
function sse(answer: Answered, model: string): string {
  const id = `msg_${++seq}`;
  const usage = usageOf(answer);
  let out = event('message_start', { message: startedMessage(id, model, { ...usage, output_tokens: 1 }) });
  answer.content.forEach((b, index) => {
    if (b.type === 'text') {
      out += event('content_block_start', { index, content_block: { type: 'text', text: '' } });
      out += event('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
    } else if (b.type === 'thinking') {
      out += event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      out += event('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'sig' } });
    } else {
      out += event('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: b.id ?? `toolu_${seq}_${index}`, name: b.name, input: {} },
      });
      const json = JSON.stringify(b.input);
      const half = Math.floor(json.length / 2);
      out += event('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: json.slice(0, half) },
      });
      out += event('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: json.slice(half) },
      });
    }
    out += event('content_block_stop', { index });
  });
  out += event('message_delta', {
    delta: { stop_reason: stopOf(answer), stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  out += event('message_stop', {});
  return out;
}

// ---- tool search (decision record 0010) ------------------------------------------------------------------------

/** The parts of a request the tool search rules read. */
interface SearchView {
  tools?: { name: string; defer_loading?: boolean }[];
  messages: { role: string; content: unknown }[];
}

type Block = { type?: string; name?: string; id?: string; tool_use_id?: string; content?: unknown };
const blocksOf = (m: { content: unknown }): Block[] => (Array.isArray(m.content) ? (m.content as Block[]) : []);

/** The tools `tool_reference` blocks have loaded so far in this request's messages. */
export function loadedByReferences(req: SearchView): Set<string> {
  const out = new Set<string>();
  for (const m of req.messages)
    for (const b of blocksOf(m))
      if (b.type === 'tool_result' && Array.isArray(b.content))
        for (const r of b.content as { type?: string; tool_name?: string }[])
          if (r.type === 'tool_reference' && r.tool_name) out.add(r.tool_name);
  return out;
}

/**
 * What the Messages API refuses about deferred tools (400 invalid_request_error), or null: a `tool_reference` must
 * name a tool the request defers, and a deferred tool can only be called after a reference loaded it.
 */
export function toolSearchProblem(req: SearchView): string | null {
  const deferred = new Set((req.tools ?? []).filter((t) => t.defer_loading).map((t) => t.name));
  const loaded = new Set<string>();
  for (const m of req.messages) {
    for (const b of blocksOf(m)) {
      if (m.role === 'assistant' && b.type === 'tool_use' && b.name && deferred.has(b.name) && !loaded.has(b.name))
        return `tool_use of deferred tool ${b.name} before a tool_reference loaded it`;
      if (b.type !== 'tool_result' || !Array.isArray(b.content)) continue;
      for (const r of b.content as { type?: string; tool_name?: string }[]) {
        if (r.type !== 'tool_reference') continue;
        if (!r.tool_name || !deferred.has(r.tool_name))
          return `tool_reference to ${r.tool_name ?? '(none)'}, which this request does not defer`;
        loaded.add(r.tool_name);
      }
    }
  }
  return null;
}

let searchSeq = 0;

/**
 * The search a model does before an answer that calls deferred tools it has not loaded (it cannot see them until
 * then): a `find_tools` call with the tools' names as keywords, as the model would search; null when the answer
 * needs no search (or the request offers no search tool).
 */
export function searchFirst(answer: ScriptedAnswer, req: SearchView): Answered | null {
  if (!('content' in answer)) return null;
  const deferred = new Set((req.tools ?? []).filter((t) => t.defer_loading).map((t) => t.name));
  const loaded = loadedByReferences(req);
  const missing = answer.content.flatMap((b) =>
    b.type === 'tool_use' && deferred.has(b.name) && !loaded.has(b.name) ? [b.name] : [],
  );
  if (missing.length === 0 || !(req.tools ?? []).some((t) => t.name === 'find_tools')) return null;
  return {
    content: [
      { type: 'thinking', thinking: '' },
      {
        type: 'tool_use',
        id: `toolu_search_${++searchSeq}`,
        name: 'find_tools',
        input: { query: [...new Set(missing)].map((n) => n.replace(/_/g, ' ')).join(' ') },
      },
    ],
  };
}

/** A `find_tools` call the model makes with this query. */
export function searchCall(query: string): ScriptedAnswer {
  return { content: [{ type: 'tool_use', name: 'find_tools', input: { query } }] };
}
