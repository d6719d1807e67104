import type { Logger } from '../../observability/logger';

/** The bot's own ChatWork account, as `GET /me` tells it. */
export interface ChatworkAccount {
  accountId: string;
  name: string;
}

/** Options of {@link ChatworkBotIdentity}. */
export interface ChatworkBotIdentityOptions {
  /** `GET /me` (the client's `getMe`). */
  getMe: () => Promise<ChatworkAccount>;
  logger: Logger;
  /** Known without asking (tests, benchmarks): no request is made. */
  known?: { accountId: string; name?: string };
  /** First background retry delay; doubles up to `maxRetryMs`. Default 2 000 ms. */
  retryMs?: number;
  /** Longest background retry delay. Default 60 000 ms. */
  maxRetryMs?: number;
}

/**
 * Who the bot is on ChatWork (R-A2: ignore its own messages, recognise mentions of it, the name people
 * write after its `[To:]` tag). `GET /me` is asked at start; if that fails (ChatWork down, a network
 * blip), it is retried in the background until it succeeds, so room webhooks start working without a
 * restart. Concurrent callers share one request.
 */
export class ChatworkBotIdentity {
  private account: { accountId: string; name?: string } | undefined;
  private inFlight: Promise<boolean> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly o: ChatworkBotIdentityOptions) {
    this.account = o.known;
  }

  /** The bot's account id, once known. */
  get accountId(): string | undefined {
    return this.account?.accountId;
  }

  /** The bot's display name, once known. */
  get name(): string | undefined {
    return this.account?.name;
  }

  /** Asks `GET /me` now (one request shared by concurrent callers). True when the account is known. */
  refresh(): Promise<boolean> {
    if (this.account) return Promise.resolve(true);
    this.inFlight ??= this.o
      .getMe()
      .then(
        (me) => {
          this.account = me;
          this.o.logger.info({ botAccountId: me.accountId }, 'ChatWork bot account identified');
          return true;
        },
        (err: Error) => {
          this.o.logger.warn({ err: err.message }, 'ChatWork GET /me failed; retrying in the background');
          return false;
        },
      )
      .finally(() => {
        this.inFlight = null;
      });
    return this.inFlight;
  }

  /**
   * Asks `GET /me` once and, if that fails, keeps retrying in the background (doubling delays) until it
   * succeeds or {@link stop} is called. Resolves after the first attempt.
   */
  async start(): Promise<void> {
    if (await this.refresh()) return;
    this.schedule(this.o.retryMs ?? 2_000);
  }

  /** Stops background retries. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.account) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.refresh().then((ok) => {
        if (!ok) this.schedule(Math.min(delayMs * 2, this.o.maxRetryMs ?? 60_000));
      });
    }, delayMs);
    this.timer.unref();
  }
}
