-- Bot messages whose confirmation buttons are still live (options an array of `h1:` keys): the QuestionCloser
-- (src/pipeline/question-closer.ts) looks here every second for questions whose confirmation was decided and
-- closes them (options become {"closed": …}), so the index holds only the few open questions.
CREATE INDEX "conversation_messages_open_questions_idx" ON "conversation_messages" ("id")
  WHERE role = 'assistant' AND jsonb_typeof(options) = 'array' AND (options -> 0 ->> 'key') LIKE 'h1:%';
