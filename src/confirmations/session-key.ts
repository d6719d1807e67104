/** A conversation session is per (platform, room, account) (R-S1). */
export interface SessionKey {
  platform: string;
  roomId: string;
  accountId: string;
}
