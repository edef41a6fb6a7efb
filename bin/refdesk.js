#!/usr/bin/env node
// The `refdesk` command: runs the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../server/cli.ts');
try {
  const code = await runCli(process.argv.slice(2));
  if (code >= 0) process.exit(code);
} catch (e) {
  process.stderr.write(`refdesk: ${e && e.code && e.status ? e.message : e?.code?.startsWith?.('ERR_PARSE_ARGS') ? e.message : e?.stack ?? e}\n`);
  process.exit(1);
}
