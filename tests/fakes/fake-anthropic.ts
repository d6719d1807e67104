import nock from 'nock';

/** One scripted model answer: content blocks plus stop reason, or an HTTP error. */
export type ScriptedAnswer =
  | {
      content: ScriptedBlock[];
      stop_reason?: string;
      usage?: Partial<{
        input_tokens: number;
        output_tokens: number;
        cache_creation_input_tokens: number;
        cache_read_input_tokens: number;
      }>;
    }
  | { status: number; errorType: string; headers?: Record<string, string>; delayMs?: number }
  | { hangMs: number }
  /** A stream that starts, then breaks: an `event: error` (e.g. overloaded_error) or an abrupt end. */
  | { streamBreak: 'error_event' | 'truncated' };

export type ScriptedBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'tool_use'; id?: string; name: string; input: unknown };

export const FAKE_ANTHROPIC_URL = 'http://anthropic.test';

let seq = 0;

/** A reply meta-tool call with valid reasoning and confidence. */
export function replyCall(text: string, overall = 0.9): ScriptedAnswer {
  return {
    content: [
      { type: 'thinking', thinking: '' },
      {
        type: 'tool_use',
        name: 'reply',
        input: {
          reasoning: {
            intent_understanding: 'The person is greeting me and wants a friendly answer.',
            context_used: ['message'],
            no_tool_reason: 'Conversation only.',
            response_strategy: 'Answer warmly.',
          },
          confidence: { overall, intent: overall, parameters: overall },
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
          reasoning: {
            intent_understanding: 'The person asked for something that has several possible targets.',
            context_used: ['directory'],
            ambiguity_detected: 'Which person is meant.',
            possible_interpretations: options,
          },
          confidence: { overall: 0.5, intent: 0.8, parameters: 0.3 },
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
  const overall = opts.overall ?? 0.9;
  return {
    content: [
      {
        type: 'tool_use',
        name,
        input: {
          reasoning: {
            intent_understanding: opts.reasoning ?? 'The person asks me to do this action with these parameters.',
            context_used: ['message'],
            tool_selection_reason: `${name} does what was asked.`,
            alternatives_considered: [],
          },
          confidence: { overall, intent: overall, parameters: overall },
          parameters,
          parameter_sources: [],
        },
      },
    ],
  };
}

function sse(answer: Extract<ScriptedAnswer, { content: ScriptedBlock[] }>, model: string): string {
  const id = `msg_${++seq}`;
  const usage = {
    input_tokens: 900,
    output_tokens: 120,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 2400,
    ...(answer.usage ?? {}),
  };
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  let out = ev('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  answer.content.forEach((b, index) => {
    if (b.type === 'text') {
      out += ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      out += ev('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
    } else if (b.type === 'thinking') {
      out += ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      out += ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'sig' } });
    } else {
      out += ev('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: b.id ?? `toolu_${seq}_${index}`, name: b.name, input: {} },
      });
      const json = JSON.stringify(b.input);
      const half = Math.floor(json.length / 2);
      out += ev('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: json.slice(0, half) },
      });
      out += ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(half) } });
    }
    out += ev('content_block_stop', { index });
  });
  const stop = answer.stop_reason ?? (answer.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  out += ev('message_delta', {
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  out += ev('message_stop', {});
  return out;
}

/**
 * Scripts the fake Messages API (nock on global fetch). Answers are served in order; every request body
 * is recorded so tests can assert what the model was sent.
 */
export class FakeAnthropic {
  readonly requests: Record<string, unknown>[] = [];
  readonly headers: Record<string, string | string[]>[] = [];
  private readonly answers: ScriptedAnswer[] = [];

  constructor(private readonly model = 'claude-opus-5-5') {}

  /** Queue answers and (re)install the interceptor. */
  script(...answers: ScriptedAnswer[]): this {
    this.answers.push(...answers);
    this.install();
    return this;
  }

  get pending(): number {
    return this.answers.length;
  }

  /** (Re)installs the interceptor: the test setup clears nock after each test. */
  private install(): void {
    nock.removeInterceptor({
      hostname: 'anthropic.test',
      port: 80,
      path: '/v1/messages',
      method: 'POST',
      proto: 'http',
    });
    const self = this;
    nock(FAKE_ANTHROPIC_URL)
      .persist()
      .post('/v1/messages')
      .reply(function (_uri, body, cb) {
        self.requests.push(body as Record<string, unknown>);
        self.headers.push(this.req.headers as Record<string, string | string[]>);
        const a = self.answers.shift();
        const done = (status: number, payload: string, headers: Record<string, string>) =>
          cb(null, [status, payload, headers]);
        if (!a)
          return done(
            500,
            JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'no scripted answer' } }),
            { 'content-type': 'application/json', 'x-should-retry': 'false' },
          );
        if ('hangMs' in a)
          return void setTimeout(() => done(500, '{}', { 'x-should-retry': 'false' }), a.hangMs).unref();
        if ('streamBreak' in a) {
          const start =
            `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_x', type: 'message', role: 'assistant', model: self.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } })}\n\n` +
            `event: content_block_start\ndata: ${JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_x', name: 'announce', input: {} } })}\n\n` +
            `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"parameters":{"recipients":"all"' } })}\n\n`;
          const tail =
            a.streamBreak === 'error_event'
              ? `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`
              : '';
          return done(200, start + tail, { 'content-type': 'text/event-stream' });
        }
        if ('status' in a) {
          const payload = JSON.stringify({
            type: 'error',
            error: { type: a.errorType, message: 'scripted' },
            request_id: 'req_fake',
          });
          const send = () =>
            done(a.status, payload, {
              'content-type': 'application/json',
              'request-id': 'req_fake',
              ...(a.headers ?? {}),
            });
          return void (a.delayMs ? setTimeout(send, a.delayMs) : send());
        }
        done(200, sse(a, self.model), { 'content-type': 'text/event-stream', 'request-id': `req_${seq}` });
      });
  }

  /** Removes the interceptor and forgets recorded requests and unused answers. */
  stop(): void {
    this.requests.length = 0;
    this.headers.length = 0;
    this.answers.length = 0;
    nock.removeInterceptor({
      hostname: 'anthropic.test',
      port: 80,
      path: '/v1/messages',
      method: 'POST',
      proto: 'http',
    });
  }
}
