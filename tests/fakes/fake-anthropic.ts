import nock from 'nock';
import { okBody, searchFirst, toolSearchProblem, type ScriptedAnswer } from './anthropic-sse';

export { clarifyCall, replyCall, toolCall, type ScriptedAnswer, type ScriptedBlock } from './anthropic-sse';

export const FAKE_ANTHROPIC_URL = 'http://anthropic.test';

/**
 * Scripts the fake Messages API (nock on global fetch). Answers are served in order; every request body
 * is recorded so tests can assert what the model was sent. Like the model, it searches before calling a deferred
 * tool it has not loaded (a `find_tools` call first; the scripted answer follows once the search loaded the tool),
 * and like the API it refuses a request that references or calls deferred tools wrongly (400).
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
        const done = (status: number, payload: string, headers: Record<string, string>) =>
          cb(null, [status, payload, headers]);
        const problem = toolSearchProblem(body as Parameters<typeof toolSearchProblem>[0]);
        if (problem)
          return done(
            400,
            JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: problem } }),
            {
              'content-type': 'application/json',
              'x-should-retry': 'false',
            },
          );
        const next = self.answers[0];
        const search = next && searchFirst(next, body as Parameters<typeof searchFirst>[1]);
        const a = search ?? self.answers.shift();
        if (!a)
          return done(
            500,
            JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'no scripted answer' } }),
            { 'content-type': 'application/json', 'x-should-retry': 'false' },
          );
        if ('hangMs' in a)
          return void setTimeout(() => done(500, '{}', { 'x-should-retry': 'false' }), a.hangMs).unref();
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
        // A plain answer cut halfway ends where the connection closed (nock sends the half as the whole body).
        const ok = okBody(a, body, self.model);
        const headers = { 'content-type': ok.contentType, ...(ok.requestId ? { 'request-id': ok.requestId } : {}) };
        const send = () => done(200, ok.text, headers);
        return void ('delayMs' in a && a.delayMs ? setTimeout(send, a.delayMs) : send());
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
