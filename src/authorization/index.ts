/** AuthorizationGate (SPEC §3.6, seed 003 §6.4): the database, not the LLM, decides who may do what. */
export {
  loadActor,
  actorFromRows,
  audienceOf,
  isPublicRoom,
  DEFAULT_UNKNOWN_LEVEL,
  PUBLIC_LEVEL,
  type ActorRows,
  type Actor,
  type LoadActorInput,
  type RoomAuthority,
} from './actor';
export {
  visibleDepartments,
  isDepartmentVisible,
  isValidLevel,
  descendants,
  hiddenTopSecret,
  MIN_LEVEL,
  MAX_LEVEL,
  NO_DEPARTMENT,
  SCOPE_FIELDS,
  type DepartmentNode,
} from './scope';
export {
  loadDirectory,
  matchMembers,
  normaliseName,
  plainName,
  resolveMemberRef,
  withReferencedTasks,
  type Directory,
  type DirectoryMember,
} from './directory';
export type { AuthDecision, AuthReasonCode } from './decision';
export { checkedParams, isPersonRole, referencedTaskIds, type CheckedParam, type CheckedRole } from './targets';
export {
  PERSON_SCOPE_TABLE,
  ORGANISATION_WIDE,
  personScopeMarkdown,
  type PersonRole,
  type Relation,
  type Outcome,
} from './person-scope';
export {
  authorize,
  authorizeWithLookup,
  directoryFor,
  filterToolsForActor,
  offeredToolsForActor,
  toolsAboveActor,
  requiredLevelOf,
  DEFAULT_REQUIRED_LEVEL,
  type AuthorizeInput,
  type AuthorizeWithLookupInput,
} from './authorization-gate';
export { handledTopics, resolveReferences, type ResolvedReferences, type UnresolvedReference } from './references';
