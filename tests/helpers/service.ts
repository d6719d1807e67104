import { loadConfig } from '../../src/config/env';
import { silentLogger } from '../../src/observability/logger';
import { startService, type Service, type ServiceOverrides } from '../../src/service';
import { FAKE_ANTHROPIC_URL } from '../fakes/fake-anthropic';
import { createTestDatabase, type TestDatabase } from './db';

export const TEST_API_KEY = 'sk-ant-test-0123456789abcdefghijklmnop';
export const CW_API_TOKEN = 'cw-api-token-secret-0123456789';
export const CW_WEBHOOK_TOKEN = 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';
export const CW_BASE = 'https://api.chatwork.test/v2';
export const BOT_ACCOUNT = '9999';

export interface TestService extends Service {
  testDb: TestDatabase;
  url: string;
  close(): Promise<void>;
}

/** The whole service on a fresh database, with Anthropic (and optionally ChatWork) faked over HTTP. */
export async function startTestService(
  env: Record<string, string> = {},
  o: ServiceOverrides = {},
): Promise<TestService> {
  const testDb = await createTestDatabase();
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: testDb.url,
    ANTHROPIC_API_KEY: TEST_API_KEY,
    ANTHROPIC_BASE_URL: FAKE_ANTHROPIC_URL,
    LLM_MAX_RETRIES: '0',
    LLM_TIMEOUT_MS: '5000',
    WORKER_CONCURRENCY: '4',
    LLM_DAILY_COST_LIMIT_USD: '0',
    // Tests talk fast from few accounts: per-sender budgets are on but roomy (the budget test sets its own).
    SENDER_TURNS_PER_MINUTE: '1000',
    SENDER_TURNS_PER_DAY: '100000',
    ...env,
  });
  await testDb.close();
  const svc = await startService(config, {
    logger: silentLogger(),
    workerPollMs: 50,
    chatworkBotAccountId: BOT_ACCOUNT,
    ...o,
  });
  return Object.assign(svc, { testDb, url: `http://127.0.0.1:${svc.port}`, close: () => svc.stop() });
}

/** Env that turns the ChatWork adapter on against the fake API host. */
export function chatworkEnv(): Record<string, string> {
  return {
    CHATWORK_API_TOKEN: CW_API_TOKEN,
    CHATWORK_WEBHOOK_TOKEN: CW_WEBHOOK_TOKEN,
    CHATWORK_API_BASE_URL: CW_BASE,
    CONSOLE_ENABLED: 'true',
  };
}

/** Polls until `check` returns a truthy value (or fails after `ms`). */
export async function waitFor<T>(
  check: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  ms = 8000,
  what = 'condition',
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v as T;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
