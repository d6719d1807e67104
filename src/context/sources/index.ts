import { goalsSource } from './goals.source';
import { knowledgeSource } from './knowledge.source';
import { memoriesSource } from './memories.source';
import { personsSource } from './persons.source';
import { tasksSource } from './tasks.source';

/** The context sources of a user turn, in rendering order (the service and the evaluation set use the same list). */
export const TURN_CONTEXT_SOURCES = [personsSource, tasksSource, goalsSource, memoriesSource, knowledgeSource];
