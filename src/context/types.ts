import type { InboundMessage } from '../core/chat';
import type { ClosingDay } from '../core/business-calendar';

/** One line of conversation history given to the LLM. */
export interface HistoryEntry {
  role: 'user' | 'assistant';
  text: string;
  at: string;
}

/** What the sender is, from the directory (never from the LLM). */
export interface SenderProfile {
  known: boolean;
  memberId: string | null;
  name: string;
  level: number;
  departmentId: string | null;
  departmentName: string | null;
  title: string | null;
  preferences: Record<string, unknown>;
}

/** A person in the room as the platform lists them (ChatWork room members): a name, never authority. */
export interface RoomMember {
  accountId: string;
  name: string;
}

/** A titled block of context lines (persons, tasks, goals, memories, knowledge). */
export interface ContextSection {
  title: string;
  lines: string[];
}

/** Everything the brain knows for one turn (R-X1). Rendering order is fixed (R-X3). */
export interface TurnContext {
  /** `closingDays`: the organisation's own days off (directory), for its business calendar; absent → none. */
  org: { id: string; name: string; timezone: string; values: string; closingDays?: readonly ClosingDay[] };
  /** "CEO teachings": highest-priority guidance, stable across turns. */
  policies: { id: string; title: string; content: string; rule?: unknown }[];
  sender: SenderProfile;
  room: { platform: string; roomId: string; name: string | null; authority: 'member' | 'public' };
  /**
   * Who may read the reply: `member` (a member room or a member's DM) or `public` (a public room, or a
   * sender at level 0). A public audience gets no organisation data in context or prompt (issue 8).
   */
  audience: 'member' | 'public';
  history: HistoryEntry[];
  summary: string | null;
  now: Date;
  /** "2026年11月22日(日) 10:30 (Asia/Tokyo)". */
  nowText: string;
  /** Today on the business calendar, the next business day and the days off ahead (see `calendarLine`). */
  calendarText?: string;
  message: InboundMessage;
  language: 'ja' | 'en';
  sections: ContextSection[];
  /** Sources that failed and were skipped (R-X2). */
  degraded: string[];
}
