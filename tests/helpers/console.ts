import type { TestService } from './service';

/** A message typed (or a button pressed, with `key`) in the local console, as its page sends it. */
export function consoleSay(
  svc: Pick<TestService, 'url'>,
  memberId: string,
  roomId: string,
  text: string,
  key?: string,
): Promise<Response> {
  const body = JSON.stringify({ memberId, text, roomId, ...(key ? { key } : {}) });
  const headers = { 'content-type': 'application/json' };
  return fetch(`${svc.url}/console/api/messages`, { method: 'POST', headers, body });
}

/** The bot's messages in a console room, oldest first. */
export function consoleBotMessages(svc: Pick<TestService, 'db'>, roomId: string) {
  return svc.db.conversationMessage.findMany({
    where: { platform: 'console', roomId, role: 'assistant' },
    orderBy: { id: 'asc' },
  });
}
