/**
 * The capability manifest: every tool the bot can propose, in one list. Adding a tool is a file in this
 * folder (its `defineTool` declaration) and one line here.
 */
import type { ToolDefinition } from '../src/tools/types';
import { announce } from './announcements';
import { lookupPerson } from './directory';
import { breakGoalIntoTasks, reportGoalProgress, startGoalSetting, viewGoals } from './goals';
import { searchKnowledgeTool } from './knowledge';
import { deleteMemory, queryMemory, saveMemory } from './memory';
import { getNoticePreferences, setNoticePreference } from './notices';
import { cancelReminder, createReminder, listReminders } from './reminders';
import {
  cancelSchedule,
  changeSchedule,
  createRoomSchedule,
  createSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  snoozeReminder,
} from './schedules';
import { cancelTask, changeTask, completeTask, createTask, searchTasks } from './tasks';
import { teamOverview } from './team';
import { cancelWork, saveArtifact, startWork, workStatus } from './work';

export const handlers: readonly ToolDefinition[] = [
  createTask,
  completeTask,
  searchTasks,
  changeTask,
  cancelTask,
  createReminder,
  listReminders,
  cancelReminder,
  createSchedule,
  createRoomSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  changeSchedule,
  cancelSchedule,
  snoozeReminder,
  saveMemory,
  queryMemory,
  deleteMemory,
  startGoalSetting,
  reportGoalProgress,
  viewGoals,
  breakGoalIntoTasks,
  announce,
  lookupPerson,
  teamOverview,
  setNoticePreference,
  getNoticePreferences,
  searchKnowledgeTool,
  startWork,
  workStatus,
  cancelWork,
  saveArtifact,
] as readonly ToolDefinition[];
