import type { TurnContext } from '../../src/context/types';

/** A member's turn in a ChatWork room of 株式会社アクメ (田中太郎, level 3), with some history. */
export function turnContext(over: Partial<TurnContext> = {}): TurnContext {
  return {
    org: { id: 'acme', name: '株式会社アクメ', timezone: 'Asia/Tokyo', values: '可能性の解放' },
    policies: [
      { id: 'b', title: '悪い報告ほど早く', content: '悪い知らせは先に伝える。' },
      { id: 'a', title: '全員宛ては確認', content: '全員宛ては確認する。' },
    ],
    sender: {
      known: true,
      memberId: 'tanaka-taro',
      name: '田中太郎',
      level: 3,
      departmentId: 'sales-tokyo',
      departmentName: '東京営業課',
      title: null,
      preferences: {},
    },
    room: { platform: 'chatwork', roomId: '5001', name: null, authority: 'member' },
    audience: 'member',
    history: [
      { role: 'assistant', text: '前の返事', at: '' },
      { role: 'user', text: '前の質問', at: '' },
      { role: 'assistant', text: '前の答え', at: '' },
    ],
    summary: null,
    now: new Date('2026-11-22T01:00:00Z'),
    nowText: '2026年11月22日(日) 10:00 (Asia/Tokyo)',
    message: {
      platform: 'chatwork',
      orgId: 'acme',
      roomId: '5001',
      senderAccountId: '1004',
      text: 'こんにちは',
      rawText: '',
      mentions: [],
      platformMessageId: '1',
      sentAt: '',
    },
    language: 'ja',
    sections: [],
    degraded: [],
    ...over,
  };
}
