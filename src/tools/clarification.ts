/**
 * Thrown by a handler when the request cannot be carried out without a choice from the person
 * (e.g. two members called 田中). The tool stage turns it into a clarification question; nothing ran.
 */
export class ClarificationNeeded extends Error {
  constructor(
    readonly questionJa: string,
    readonly options: string[],
    readonly questionEn?: string,
  ) {
    super('clarification needed');
    this.name = 'ClarificationNeeded';
  }
}
