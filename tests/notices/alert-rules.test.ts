import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/env';
import { alertsFor, DEFAULT_THRESHOLDS, type MonitorFigures } from '../../src/notices/alert-monitor';
import { createMetrics } from '../../src/observability/metrics';

const RULES = path.resolve(__dirname, '..', '..', 'ops', 'prometheus', 'hisho-alerts.yml');
interface Rule {
  alert: string;
  expr: string;
  labels: { severity: string };
}

describe('the shipped Prometheus alert rules (ops/prometheus/hisho-alerts.yml)', () => {
  const rules = (parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
    (g) => g.rules,
  );
  const byName = (n: string) =>
    rules
      .find((r) => r.alert === n)!
      .expr.replace(/\s+/g, ' ')
      .trim();

  it('only uses metrics the service exports', async () => {
    const exported = new Set((await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name));
    for (const r of rules) {
      for (const [name] of r.expr.matchAll(/hisho_[a-z0-9_]+/g)) {
        expect({ rule: r.alert, metric: exported.has(name.replace(/_bucket$/, '')) ? 'exported' : name }).toEqual({
          rule: r.alert,
          metric: 'exported',
        });
      }
    }
  });

  it('carries the same thresholds as the service defaults (seed 003 §15.1)', () => {
    const env = loadConfig({});
    expect(byName('HishoLlmLatencyP95High')).toMatch(new RegExp(`> ${env.ALERT_LLM_P95_SECONDS}$`));
    expect(byName('HishoToolErrorRateHigh')).toMatch(new RegExp(`> ${env.ALERT_TOOL_ERROR_RATE}$`));
    expect(byName('HishoConfirmationRateHigh')).toMatch(new RegExp(`> ${env.ALERT_CONFIRMATION_RATE}$`));
    expect(byName('HishoBlockRateHigh')).toMatch(new RegExp(`> ${env.ALERT_BLOCK_RATE}$`));
    expect(byName('HishoDailyCostOverBudget')).toMatch(new RegExp(`> ${env.ALERT_DAILY_COST_USD}$`));
    expect([
      env.ALERT_LLM_P95_SECONDS,
      env.ALERT_TOOL_ERROR_RATE,
      env.ALERT_CONFIRMATION_RATE,
      env.ALERT_BLOCK_RATE,
    ]).toEqual([
      DEFAULT_THRESHOLDS.llmP95Seconds,
      DEFAULT_THRESHOLDS.toolErrorRate,
      DEFAULT_THRESHOLDS.confirmationRate,
      DEFAULT_THRESHOLDS.blockRate,
    ]);
  });
});

describe('alert thresholds (pure)', () => {
  const quiet: MonitorFigures = {
    p95Ms: 30_000,
    llmCalls: 19,
    turns: 19,
    confirms: 19,
    blocks: 19,
    executions: 19,
    executionErrors: 19,
    costTodayUsd: 0,
    violations: 0,
    violationCodes: null,
    violationTurns: null,
  };

  it('raises nothing below the sample size, however bad the few samples are', () => {
    expect(alertsFor(quiet, DEFAULT_THRESHOLDS)).toEqual([]);
  });

  it('raises each threshold just above it, not at it', () => {
    const at = {
      ...quiet,
      p95Ms: 10_000,
      llmCalls: 100,
      turns: 100,
      confirms: 30,
      blocks: 10,
      executions: 100,
      executionErrors: 5,
      costTodayUsd: 35,
    };
    expect(alertsFor(at, DEFAULT_THRESHOLDS)).toEqual([]);
    const above = {
      ...at,
      p95Ms: 10_001,
      confirms: 31,
      blocks: 11,
      executionErrors: 6,
      costTodayUsd: 35.01,
      violations: 1,
    };
    expect(alertsFor(above, DEFAULT_THRESHOLDS).map((a) => a.kind)).toEqual([
      'llm_latency_p95',
      'tool_error_rate',
      'confirmation_rate',
      'block_rate',
      'daily_cost_budget',
      'constitution_violation',
    ]);
  });
});
