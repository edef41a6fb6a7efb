/** What the MCP tools tell a model: the server instructions and each tool's description. */

export const SERVER_INSTRUCTIONS =
  'Refdesk answers questions about software libraries from their own documentation. ' +
  'Call resolve-library-id with the library name to get its library ID (skip it when the user gave an ID such as /owner/repo or /docs/name), ' +
  'then call query-docs with that ID and one focused question. Quote the snippets and their sources in your answer.';

export const RESOLVE_DESCRIPTION = [
  'Finds the Refdesk library ID of a library, framework or documentation set by its name, and lists the matching libraries (title, ID, description, code snippet count, trust, benchmark score, versions), best match first.',
  '',
  'Call this BEFORE query-docs to get the library ID it needs, unless the user already gave a library ID (a path such as /owner/repo, /docs/name, /npm/package or /websites/site, optionally with @version): then call query-docs directly.',
  '',
  'Pick the result whose title and description match what the user asks about; when several fit, prefer more code snippets and higher trust. Use a version from the list (ID@version) only when the user asks about that version.',
  'Do not call this more than 3 times for one question. If nothing fits, tell the user the library is not on this Refdesk server.',
].join('\n');

export const QUERY_DOCS_DESCRIPTION = [
  "Answers a question from a library's own documentation: returns the most relevant snippets (code examples and explanations), each with its source file or URL.",
  '',
  'Needs a library ID: from resolve-library-id, or one the user gave (e.g. /docs/koa, /owner/repo, /owner/repo@v2.0.0).',
  'Ask about ONE concept per call, as a plain question ("how do I set a signed cookie"), not a list of keywords or several topics at once; make one call per concept.',
  'Do not call this more than 3 times for one question; answer with what you found.',
].join('\n');

export const GET_LIBRARY_DOCS_DESCRIPTION = [
  'Older name of query-docs, kept for prompts that still call it: fetches documentation of a library by its library ID about a topic. Prefer query-docs.',
  '',
  'Needs the library ID from resolve-library-id (unless the user gave one). Give a topic (one concept, e.g. "routing" or "how to set a cookie"); without one you get an overview.',
].join('\n');

export const ARG = {
  libraryName: 'The name of the library to look up, as the user wrote it (e.g. "react", "koa", "next.js").',
  resolveQuery: "The user's question or task, used to rank libraries with similar names (e.g. \"how to stream a response\").",
  libraryId: 'The exact library ID, e.g. /docs/koa, /owner/repo or /owner/repo@v2.0.0 (from resolve-library-id, or given by the user).',
  query: 'One focused question about the library, in plain words (e.g. "how do I handle errors in middleware").',
  tokens: 'Upper bound on the size of the answer in tokens (the server clamps it to its limits). Leave it out for the default.',
  topic: 'The topic to fetch documentation about (one concept, e.g. "routing" or "error handling").',
} as const;
