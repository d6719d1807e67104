import type { Logger } from '../observability/logger';
import type { RoomMember } from './types';

export interface RoomMembersOptions {
  /** The platform's member list of a room (ChatWork `GET /rooms/{id}/members`, one attempt, bounded). */
  list: (roomId: string) => Promise<RoomMember[]>;
  /** How long a list is reused. */
  ttlMs: number;
  /** After a failed read, the previous list (or none) is used this long before asking again. Default 60 s. */
  failureTtlMs?: number;
  /** A turn waits at most this long for a list it does not have. Default 2 s. */
  waitMs?: number;
  /** Rooms kept; the oldest entries go first. Default 2000. */
  maxRooms?: number;
  logger: Logger;
  now?: () => number;
}

interface Entry {
  members: RoomMember[];
  until: number;
}

/**
 * Who is in a ChatWork room (issue 12 §3), so that people the directory does not list are known by name in
 * the persons context — names only: they never gain any authority (the AuthorizationGate reads the
 * directory alone). Kept in memory per instance with a TTL rather than in Postgres: the list is small,
 * cheap to read again, not authoritative, and names of guests would otherwise be personal data at rest with
 * a retention of their own. One read per room at a time; a failing API (429, 5xx, timeout) degrades to the
 * previous list or none, logged without secrets, and is not asked again for `failureTtlMs`.
 */
export class RoomMembersCache {
  private readonly cache = new Map<string, Entry>();
  private readonly reading = new Map<string, Promise<RoomMember[]>>();

  constructor(private readonly o: RoomMembersOptions) {}

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** The room's members; never throws, and never waits longer than `waitMs`. */
  async forRoom(roomId: string): Promise<RoomMember[]> {
    if (this.o.ttlMs <= 0) return [];
    const hit = this.cache.get(roomId);
    if (hit && hit.until > this.now()) return hit.members;
    const read = this.reading.get(roomId) ?? this.read(roomId, hit);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<RoomMember[]>((resolve) => {
      timer = setTimeout(() => resolve(hit?.members ?? []), this.o.waitMs ?? 2000);
      timer.unref?.();
    });
    try {
      return await Promise.race([read, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private read(roomId: string, previous: Entry | undefined): Promise<RoomMember[]> {
    const p = this.o
      .list(roomId)
      .then((members) => {
        this.put(roomId, { members, until: this.now() + this.o.ttlMs });
        return members;
      })
      .catch((err: unknown) => {
        const e = err as { code?: string; name?: string };
        this.o.logger.warn(
          { roomId, err: e.code ?? e.name ?? 'Error' },
          'room members could not be read; persons context without them',
        );
        const members = previous?.members ?? [];
        this.put(roomId, { members, until: this.now() + (this.o.failureTtlMs ?? 60_000) });
        return members;
      })
      .finally(() => this.reading.delete(roomId));
    this.reading.set(roomId, p);
    return p;
  }

  private put(roomId: string, e: Entry): void {
    this.cache.delete(roomId);
    if (this.cache.size >= (this.o.maxRooms ?? 2000)) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(roomId, e);
  }
}
