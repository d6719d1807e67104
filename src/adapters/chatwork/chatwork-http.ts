import type { Logger } from '../../observability/logger';
import { chatworkApiError, networkErrorCode, readChatworkErrors, surelyNotSent } from './api-errors';
import { httpRequest, type HttpAnswer } from './http-request';
import { GlobalRateBudget, KeyedWindowLimiter, msUntilReset, type Timer } from './rate-limiter';

/** Options of {@link ChatworkHttp} / `ChatworkClient`. */
export interface ChatworkClientOptions {
  apiToken: string;
  /** API root including the version, e.g. `https://api.chatwork.com/v2` (the default). */
  baseUrl?: string;
  logger: Logger;
  /** Retries after the first attempt, for 429, 5xx and network errors. Default 3. */
  maxRetries?: number;
  /** Cap on any wait for a rate-limit reset. Default 60 000 ms. */
  maxRateLimitWaitMs?: number;
  /** First backoff step for 5xx / network errors. Default 500 ms (doubles per attempt, max 8 s). */
  backoffBaseMs?: number;
  /** Per-request timeout. Default 15 000 ms. */
  timeoutMs?: number;
  /** Per-room posting limit (messages + tasks). Default 10 per 10 000 ms. */
  roomPostLimit?: { max: number; windowMs: number };
  /** Clock in epoch ms (tests). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1) (tests). */
  random?: () => number;
}

/** A successful response: `json` is undefined for 204. */
export interface ChatworkResponse {
  status: number;
  json: unknown;
}

const ROOM_LIMIT_ERROR = /per room/i;

/**
 * The HTTP layer of the ChatWork client: auth header, form bodies, rate limits, retries, and errors
 * that never carry the API token.
 */
export class ChatworkHttp {
  private readonly baseUrl: string;
  private readonly timer: Timer;
  private readonly maxRetries: number;
  private readonly maxWaitMs: number;
  private readonly backoffBaseMs: number;
  private readonly timeoutMs: number;
  private readonly roomWindowMs: number;
  private readonly random: () => number;
  private readonly budget: GlobalRateBudget;
  private readonly rooms: KeyedWindowLimiter;

  constructor(private readonly opts: ChatworkClientOptions) {
    this.baseUrl = (opts.baseUrl ?? 'https://api.chatwork.com/v2').replace(/\/+$/, '');
    this.timer = {
      now: opts.now ?? Date.now,
      sleep: opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    };
    this.maxRetries = opts.maxRetries ?? 3;
    this.maxWaitMs = opts.maxRateLimitWaitMs ?? 60_000;
    this.backoffBaseMs = opts.backoffBaseMs ?? 500;
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.random = opts.random ?? Math.random;
    const room = opts.roomPostLimit ?? { max: 10, windowMs: 10_000 };
    this.roomWindowMs = room.windowMs;
    this.budget = new GlobalRateBudget(this.timer, this.maxWaitMs);
    this.rooms = new KeyedWindowLimiter(room.max, room.windowMs, this.timer);
  }

  /**
   * Sends one API call with retries. A call that is not idempotent (a POST creating a message or a task)
   * is retried only when it surely did not arrive — connection refused, host unresolvable, or 429 — never
   * after a timeout, a reset connection or a 5xx, where it may have been processed: those fail with
   * `uncertain: true`, and the caller reconciles instead of sending it again.
   *
   * @param roomLimited - Room id when the call counts against the per-room posting limit.
   * @param idempotent - Whether sending the call twice is harmless (default: everything but POST).
   * @param call - Per-call retries and timeout (a read on the reply path fails fast instead of waiting).
   * @throws AppError `EXTERNAL_API_FAILED` on a non-retryable status or when retries are exhausted.
   */
  async request(
    method: string,
    path: string,
    form?: Record<string, string>,
    roomLimited?: string,
    idempotent = method !== 'POST',
    call: { maxRetries?: number; timeoutMs?: number } = {},
  ): Promise<ChatworkResponse> {
    const log = this.opts.logger;
    const maxRetries = call.maxRetries ?? this.maxRetries;
    for (let attempt = 0; ; attempt++) {
      const canRetry = attempt < maxRetries;
      await this.budget.reserve();
      if (roomLimited !== undefined) {
        // ChatWork's per-room posting limit (A5): a room that had its 10 posts in 10 s waits here, as it must.
        const pacedMs = await this.rooms.acquire(roomLimited);
        if (pacedMs > 0) log.info({ method, path, pacedMs }, 'chatwork.room_paced');
      }

      let res: HttpAnswer;
      try {
        res = await httpRequest(this.baseUrl + path, {
          method,
          headers: {
            'X-ChatWorkToken': this.opts.apiToken,
            accept: 'application/json',
            ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          },
          body: form ? new URLSearchParams(form).toString() : undefined,
          timeoutMs: call.timeoutMs ?? this.timeoutMs,
        });
      } catch (err) {
        const code = networkErrorCode(err);
        const what = `${(err as Error | null)?.name ?? 'Error'}${code ? ` ${code}` : ''}`;
        if (!idempotent && !surelyNotSent(err)) {
          log.warn({ method, path, attempt, error: what }, 'chatwork.api.outcome_unknown');
          const message = `${method} ${path} network error (${what}); it may have been processed, not retried`;
          throw this.fail(message, { cause: err, uncertain: true });
        }
        if (!canRetry)
          throw this.fail(`${method} ${path} network error (${what}) after ${attempt + 1} attempts`, { cause: err });
        const waitMs = this.backoff(attempt);
        log.warn({ method, path, attempt, waitMs, error: what }, 'chatwork.api.retry_network');
        await this.timer.sleep(waitMs);
        continue;
      }

      this.budget.update(res.headers);
      if (res.ok) {
        if (res.status === 204) return { status: 204, json: undefined };
        // A POST answered 2xx has landed, even when its answer cannot be read: never "failed", always reconcile.
        let text: string;
        try {
          text = await res.text();
        } catch (err) {
          const message = `${method} ${path} answer was cut off (HTTP ${res.status})`;
          throw this.fail(message, { cause: err, uncertain: !idempotent });
        }
        try {
          return { status: res.status, json: text ? JSON.parse(text) : undefined };
        } catch {
          throw this.fail(`${method} ${path} returned malformed JSON (HTTP ${res.status})`, { uncertain: !idempotent });
        }
      }

      const errors = await readChatworkErrors(res);
      const detail = `${method} ${path} failed: HTTP ${res.status} errors=${JSON.stringify(errors)}`;
      if (res.status === 429) {
        // A per-room 429 is about the 10 s posting window, not the global reset (which may be minutes away).
        const perRoom = errors.some((e) => ROOM_LIMIT_ERROR.test(e));
        const untilReset = msUntilReset(res.headers, this.timer.now());
        const waitMs = Math.min(perRoom || untilReset === undefined ? this.roomWindowMs : untilReset, this.maxWaitMs);
        if (!canRetry) throw this.fail(`${detail} after ${attempt + 1} attempts`, { retryAfterMs: waitMs });
        log.warn({ method, path, status: 429, attempt, waitMs, perRoom }, 'chatwork.api.rate_limited');
        await this.timer.sleep(waitMs);
        if (!perRoom) this.budget.forget();
        continue;
      }
      if (res.status >= 500 && !idempotent) {
        log.warn({ method, path, status: res.status, attempt }, 'chatwork.api.outcome_unknown');
        throw this.fail(`${detail}; it may have been processed, not retried`, { uncertain: true });
      }
      if (res.status >= 500 && canRetry) {
        const waitMs = this.backoff(attempt);
        log.warn({ method, path, status: res.status, attempt, waitMs }, 'chatwork.api.retry_status');
        await this.timer.sleep(waitMs);
        continue;
      }
      throw this.fail(res.status >= 500 ? `${detail} after ${attempt + 1} attempts` : detail);
    }
  }

  /** Exponential backoff with jitter: between half and all of base·2^attempt, capped at 8 s. */
  private backoff(attempt: number): number {
    const exp = Math.min(8_000, this.backoffBaseMs * 2 ** attempt);
    return Math.round(exp / 2 + (this.random() * exp) / 2);
  }

  private fail(message: string, opts?: { retryAfterMs?: number; cause?: unknown; uncertain?: boolean }) {
    return chatworkApiError(message, this.opts.apiToken, opts);
  }
}
