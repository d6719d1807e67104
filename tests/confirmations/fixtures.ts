import { randomBytes } from 'node:crypto';
import type { SessionKey } from '../../src/confirmations/session-key';
import type { CreatePendingInput } from '../../src/confirmations/types';

/** A fresh session key (unique room and account) so tests sharing a database do not interfere. */
export function newKey(platform = 'chatwork'): SessionKey {
  return {
    platform,
    roomId: `room-${randomBytes(4).toString('hex')}`,
    accountId: `acc-${randomBytes(4).toString('hex')}`,
  };
}

/** A plausible CONFIRM proposal (task creation for 田中さん). */
export function pendingInput(over: Partial<CreatePendingInput> = {}): CreatePendingInput {
  return {
    orgId: 'org-1',
    memberId: 'member-1',
    turnId: 'turn-1',
    proposal: {
      id: 'toolu_1',
      toolName: 'create_task',
      parameters: { title: '資料作成', assignee: '田中' },
      summary: '田中さんに「資料作成」のタスクを作成',
    },
    question: '田中さんに「資料作成」のタスクを作成します。実行してよいですか？ 1. はい 2. いいえ',
    confirmationType: 'single',
    originalMessage: '田中さんに資料作成のタスクお願い',
    reasoning: 'the user asked for a task',
    confidence: 0.82,
    reasonCode: 'CONFIRM_EXTERNAL_EFFECT',
    ...over,
  };
}

/** A manual clock. */
export class Clock {
  private t: number;
  constructor(start = '2026-03-02T09:00:00.000Z') {
    this.t = Date.parse(start);
  }
  readonly now = (): Date => new Date(this.t);
  advance(ms: number): void {
    this.t += ms;
  }
}

export const MIN = 60_000;
