import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SourceDefinition } from '../../core/define.ts';
import { addHelp, configSources } from '../../server/add-target.ts';
import { defaultConfigPath } from '../../core/config.ts';
import tracker from '../fixtures/custom-source/tracker-source.ts';

// `refdesk add --help` lists the add forms the config's sources declare, a custom source's too.
test('a custom source declaring a prefix, a flag and a variable is listed with them', () => {
  const def = tracker.definitions.find((d) => d.role === 'source') as SourceDefinition;
  const help = addHelp([def]);
  assert.match(help, /^ {2}tracker +Issue tracker$/m);
  assert.match(help, /takes: tracker:<name>/);
  assert.match(help, /--project <value> or \$TRACKER_PROJECT: the project key/);
});

test("the default distribution's forms come from its sources' declarations", async () => {
  const help = addHelp(await configSources(defaultConfigPath()));
  assert.match(help, /^ {2}git +/m);
  assert.match(help, /--branch <value>: /);
  assert.match(help, /\$REFDESK_GIT_TOKEN: /);
  assert.match(help, /takes: npm:<name>/);
  assert.match(help, /--space <value>: /);
});
