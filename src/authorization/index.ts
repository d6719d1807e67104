/** AuthorizationGate (SPEC §3.6, seed 003 §6.4): the database, not the LLM, decides who may do what. */
export { loadActor, actorFromRows, type ActorRows, DEFAULT_UNKNOWN_LEVEL, PUBLIC_LEVEL, type Actor, type LoadActorInput, type RoomAuthority } from './actor';
export { visibleDepartments, isDepartmentVisible, isValidLevel, descendants, MIN_LEVEL, MAX_LEVEL, type DepartmentNode } from './scope';
export { loadDirectory, resolveMemberRef, type Directory, type DirectoryMember } from './directory';
export { SCOPE_DENIED_MESSAGE_JA, type AuthDecision, type AuthReasonCode } from './decision';
export { checkedParams, type CheckedParam, type CheckedRole } from './targets';
export {
  authorize,
  authorizeWithLookup,
  filterToolsForActor,
  requiredLevelOf,
  DEFAULT_REQUIRED_LEVEL,
  type AuthorizeInput,
  type AuthorizeWithLookupInput,
} from './authorization-gate';
