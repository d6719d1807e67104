/**
 * Platform adapters are independent (issue 29): each connects, fails and retries on its own, and the
 * service is up without it. The supervisor keeps every adapter's state for /readyz and /metrics
 * (`hisho_adapter_up`), retries a failed connection in the background with backoff (a refused credential only
 * slowly: retrying cannot fix it), logs each new reason once, and raises the `adapter_down` admin alert when an
 * adapter stays down `downAlertMs`.
 */
import type { AlertInput } from '../notices/admin-alerts';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { Platform } from '../core/chat';

export type AdapterState = 'up' | 'down';

/** One adapter as /readyz reports it. */
export interface AdapterStatus {
  platform: Platform;
  state: AdapterState;
  since: Date;
  /** Why it is down (safe to show: no secrets, no message text); null when up. */
  reason: string | null;
}

/** A failed connection attempt, as the adapter classifies it. */
export interface AdapterFailure {
  /** One line for the log and /readyz (English; no secrets, no message text). */
  reason: string;
  /** The same for admins (the alert), in Japanese. */
  reasonJa: string;
  /** The platform refused the credentials (or the configuration): retried only after `rejectedRetryMs`. */
  rejected: boolean;
}

/** An adapter the supervisor connects and reconnects. */
export interface SupervisedAdapter {
  platform: Platform;
  /** One attempt: resolves once connected; rejects when the attempt failed (after cleaning up after itself). */
  connect(): Promise<void>;
  classify(err: unknown): AdapterFailure;
}

export interface AdapterSupervisorOptions {
  logger: Logger;
  metrics?: Metrics;
  raise: (a: AlertInput) => void;
  /** Down this long (ms) raises `adapter_down` (ADAPTER_DOWN_ALERT_MINUTES). */
  downAlertMs: number;
  /** First retry after a failed attempt; doubles up to `maxRetryMs`. Default 5 s. */
  firstRetryMs?: number;
  /** Default 5 min. */
  maxRetryMs?: number;
  /** Retry after refused credentials. Default 30 min. */
  rejectedRetryMs?: number;
  now?: () => Date;
}

interface Entry extends AdapterStatus {
  adapter: SupervisedAdapter | null;
  failures: number;
  /** The last logged reason (a repeat is logged at debug level only). */
  logged: string | null;
  retry: NodeJS.Timeout | null;
  alert: NodeJS.Timeout | null;
  /** The alert of this down period was raised. */
  alerted: boolean;
  connecting: boolean;
  reasonJa: string;
}

export class AdapterSupervisor {
  private readonly entries = new Map<Platform, Entry>();
  private stopped = false;

  constructor(private readonly o: AdapterSupervisorOptions) {}

  /** An adapter without a connection of its own (webhooks, the console): up while the service runs. */
  always(platform: Platform): void {
    this.entry(platform, null);
    this.up(platform);
  }

  /** Starts connecting `adapter` in the background (down until its first attempt succeeds). */
  supervise(adapter: SupervisedAdapter): void {
    const e = this.entry(adapter.platform, adapter);
    this.markDown(e, 'connecting', '接続を試みています');
    void this.attempt(e);
  }

  /** The adapter reports itself connected again (e.g. its library reconnected on its own). */
  up(platform: Platform): void {
    const e = this.entries.get(platform);
    if (!e || e.state === 'up') return;
    const downMs = this.now() - e.since.getTime();
    e.state = 'up';
    e.since = new Date(this.now());
    e.reason = null;
    e.failures = 0;
    e.logged = null;
    e.alerted = false;
    if (e.alert) clearTimeout(e.alert);
    e.alert = null;
    this.o.metrics?.adapterUp.set({ platform }, 1);
    this.o.logger.info({ adapter: platform, downMs }, `${platform} adapter is up`);
  }

  /** The adapter lost its connection and its library is reconnecting: down, no retry of ours. */
  down(platform: Platform, reason: string, reasonJa: string): void {
    const e = this.entries.get(platform);
    if (e) this.markDown(e, reason, reasonJa);
  }

  /** The adapter lost its connection for good (e.g. the token was revoked): down, reconnected by us. */
  lost(platform: Platform, err: unknown): void {
    const e = this.entries.get(platform);
    if (!e?.adapter || e.connecting || e.retry || this.stopped) return;
    this.failed(e, err);
  }

  status(): AdapterStatus[] {
    return [...this.entries.values()].map(({ platform, state, since, reason }) => ({ platform, state, since, reason }));
  }

  /** Stops retrying and alerting (the adapters themselves are stopped by their owners). */
  stop(): void {
    this.stopped = true;
    for (const e of this.entries.values()) {
      if (e.retry) clearTimeout(e.retry);
      if (e.alert) clearTimeout(e.alert);
      e.retry = e.alert = null;
    }
  }

  private entry(platform: Platform, adapter: SupervisedAdapter | null): Entry {
    const e: Entry = {
      platform,
      state: 'down',
      since: new Date(this.now()),
      reason: 'starting',
      adapter,
      failures: 0,
      logged: null,
      retry: null,
      alert: null,
      alerted: false,
      connecting: false,
      reasonJa: '起動中です',
    };
    this.entries.set(platform, e);
    this.o.metrics?.adapterUp.set({ platform }, 0);
    return e;
  }

  private async attempt(e: Entry): Promise<void> {
    e.retry = null;
    if (this.stopped || !e.adapter) return;
    e.connecting = true;
    try {
      await e.adapter.connect();
      e.connecting = false;
      if (!this.stopped) this.up(e.platform);
    } catch (err) {
      e.connecting = false;
      if (!this.stopped) this.failed(e, err);
    }
  }

  private failed(e: Entry, err: unknown): void {
    const f = e.adapter!.classify(err);
    e.failures++;
    const first = this.o.firstRetryMs ?? 5000;
    const delay = f.rejected
      ? (this.o.rejectedRetryMs ?? 30 * 60_000)
      : Math.min(first * 2 ** Math.min(e.failures - 1, 20), this.o.maxRetryMs ?? 5 * 60_000);
    this.markDown(e, f.reason, f.reasonJa);
    const facts = { adapter: e.platform, reason: f.reason, retryInMs: delay, failures: e.failures };
    if (e.logged !== f.reason) {
      e.logged = f.reason;
      if (f.rejected)
        this.o.logger.error(facts, `${e.platform} adapter down: ${f.reason}; retrying only in ${minutes(delay)}`);
      else
        this.o.logger.warn(facts, `${e.platform} adapter could not connect (${f.reason}); retrying in the background`);
    } else {
      this.o.logger.debug(facts, `${e.platform} adapter still cannot connect`);
    }
    if (this.stopped) return;
    e.retry = setTimeout(() => void this.attempt(e), delay);
    e.retry.unref();
  }

  private markDown(e: Entry, reason: string, reasonJa: string): void {
    if (e.state === 'up') e.since = new Date(this.now());
    e.state = 'down';
    e.reason = reason;
    e.reasonJa = reasonJa;
    this.o.metrics?.adapterUp.set({ platform: e.platform }, 0);
    if (e.alert || e.alerted || this.stopped) return;
    // Measured from when it went down; a failure that keeps repeating does not restart the clock.
    const wait = Math.max(0, e.since.getTime() + this.o.downAlertMs - this.now());
    e.alert = setTimeout(() => {
      e.alert = null;
      if (e.state !== 'down' || this.stopped) return;
      e.alerted = true;
      this.o.raise({
        kind: 'adapter_down',
        severity: 'warn',
        facts: {
          adapter: e.platform,
          since: e.since.toISOString(),
          downMinutes: Math.max(1, Math.round((this.now() - e.since.getTime()) / 60_000)),
          error: e.reasonJa,
        },
      });
    }, wait);
    e.alert.unref();
  }

  private now(): number {
    return (this.o.now?.() ?? new Date()).getTime();
  }
}

function minutes(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}
