import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics (R-O3), one registry per process, exposed at /metrics. */
export interface Metrics {
  registry: Registry;
  turns: Counter<'kind' | 'decision'>;
  guardian: Counter<'action' | 'reason_code'>;
  authDenials: Counter<'reason_code'>;
  llmLatency: Histogram<'model'>;
  tokens: Counter<'model' | 'kind'>;
  costUsd: Counter<'model'>;
  errors: Counter<'code'>;
  queueDepth: Gauge<'state'>;
  webhookAcks: Counter<'platform' | 'status'>;
  constitutionViolations: Counter<'reason_code'>;
  /**
   * Replies that said something was done which did not run in their turn, written again (issue 29), by the
   * turn's decision and how they were corrected (rewritten by the model, or the persona's fallback text).
   */
  replyClaimCorrections: Counter<'decision' | 'outcome'>;
  /** Turns refused by a per-sender budget, by limit (minute, day, cost). */
  senderBudgetRefusals: Counter<'limit'>;
  /** Messages from senders not in the directory (DMs, unlisted rooms), answered without the model. */
  strangerTurns: Counter<'platform'>;
  /** Schedule periods by outcome: fired, caught_up, skipped (R-P2). */
  schedulePeriods: Counter<'schedule' | 'status'>;
  /** Proactive notices by kind and outcome (sent, blocked, empty, opted_out, shadow, duplicate). */
  notices: Counter<'kind' | 'outcome'>;
  /** Admin alerts raised (sent once per window) and repeats suppressed inside a window (R-O5). */
  adminAlerts: Counter<'kind' | 'outcome'>;
  /** Self-critiques by verdict (ok, concern, failed) (R-B6). */
  selfCritiques: Counter<'verdict'>;
  /** 1 while the work queue reaches the database, 0 during an outage (R-E2). */
  databaseUp: Gauge;
  /** 1 while a platform adapter is connected (0: down, retrying). */
  adapterUp: Gauge<'platform'>;
  /** Tool executions by tool and status (ok, error, internal_error, clarify), from turn records. */
  toolExecutions: Counter<'tool' | 'status'>;
}

export function createMetrics(opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'hisho_' });
  const r = [registry];
  return {
    registry,
    turns: new Counter({
      name: 'hisho_turns_total',
      help: 'Turns processed',
      labelNames: ['kind', 'decision'],
      registers: r,
    }),
    guardian: new Counter({
      name: 'hisho_guardian_outcomes_total',
      help: 'Guardian verdicts',
      labelNames: ['action', 'reason_code'],
      registers: r,
    }),
    authDenials: new Counter({
      name: 'hisho_auth_denials_total',
      help: 'AuthorizationGate denials',
      labelNames: ['reason_code'],
      registers: r,
    }),
    llmLatency: new Histogram({
      name: 'hisho_llm_latency_seconds',
      help: 'LLM call latency',
      labelNames: ['model'],
      buckets: [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64],
      registers: r,
    }),
    tokens: new Counter({
      name: 'hisho_llm_tokens_total',
      help: 'LLM tokens',
      labelNames: ['model', 'kind'],
      registers: r,
    }),
    costUsd: new Counter({
      name: 'hisho_llm_cost_usd_total',
      help: 'LLM cost in USD',
      labelNames: ['model'],
      registers: r,
    }),
    errors: new Counter({ name: 'hisho_errors_total', help: 'Errors by code', labelNames: ['code'], registers: r }),
    queueDepth: new Gauge({
      name: 'hisho_queue_depth',
      help: 'Work items by state',
      labelNames: ['state'],
      registers: r,
    }),
    webhookAcks: new Counter({
      name: 'hisho_webhook_requests_total',
      help: 'Webhook requests by status',
      labelNames: ['platform', 'status'],
      registers: r,
    }),
    constitutionViolations: new Counter({
      name: 'hisho_constitution_violations_total',
      help: 'Constitution violations detected',
      labelNames: ['reason_code'],
      registers: r,
    }),
    replyClaimCorrections: new Counter({
      name: 'hisho_reply_claim_corrections_total',
      help: 'Replies that claimed an action the turn did not execute, written again (G_REPLY_UNSUPPORTED_CLAIM)',
      labelNames: ['decision', 'outcome'],
      registers: r,
    }),
    senderBudgetRefusals: new Counter({
      name: 'hisho_sender_budget_refusals_total',
      help: 'Turns refused by a per-sender budget',
      labelNames: ['limit'],
      registers: r,
    }),
    strangerTurns: new Counter({
      name: 'hisho_stranger_turns_total',
      help: 'Messages from senders not in the directory',
      labelNames: ['platform'],
      registers: r,
    }),
    schedulePeriods: new Counter({
      name: 'hisho_schedule_periods_total',
      help: 'Schedule periods by outcome',
      labelNames: ['schedule', 'status'],
      registers: r,
    }),
    notices: new Counter({
      name: 'hisho_notices_total',
      help: 'Proactive notices by kind and outcome',
      labelNames: ['kind', 'outcome'],
      registers: r,
    }),
    adminAlerts: new Counter({
      name: 'hisho_admin_alerts_total',
      help: 'Admin alerts: sent (once per window) or suppressed',
      labelNames: ['kind', 'outcome'],
      registers: r,
    }),
    selfCritiques: new Counter({
      name: 'hisho_self_critiques_total',
      help: 'Self-critiques of sampled turns by verdict',
      labelNames: ['verdict'],
      registers: r,
    }),
    databaseUp: new Gauge({
      name: 'hisho_database_up',
      help: '1 while the work queue reaches the database',
      registers: r,
    }),
    adapterUp: new Gauge({
      name: 'hisho_adapter_up',
      help: '1 while the platform adapter is connected (0: down, retried in the background)',
      labelNames: ['platform'],
      registers: r,
    }),
    toolExecutions: new Counter({
      name: 'hisho_tool_executions_total',
      help: 'Tool executions by status',
      labelNames: ['tool', 'status'],
      registers: r,
    }),
  };
}
