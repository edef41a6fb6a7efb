/**
 * Runs a file of contract suites (implementations that break rules) in a child node:test process
 * and names each failing test "<Role> <implementation>: <rule>", the rule by the first of `rules`
 * whose prefix starts the test's name (else the whole name).
 */
import { spawnSync } from 'node:child_process';

export interface ContractRun {
  status: number | null;
  stdout: string;
  /** Sorted. */
  failed: string[];
}

export function failingContractTests(file: string, rules: Array<[prefix: string, rule: string]>, timeoutMs = 120_000): ContractRun {
  const res = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', file], {
    encoding: 'utf8',
    timeout: timeoutMs,
    // Without NODE_TEST_CONTEXT, which would make the child report to this runner instead.
    env: Object.fromEntries(Object.entries({ ...process.env, NODE_NO_WARNINGS: '1' }).filter(([k]) => k !== 'NODE_TEST_CONTEXT')),
  });
  const failed: string[] = [];
  let pending: string[] = [];
  // TAP lists a suite's subtests before the suite's own line.
  for (const line of res.stdout.split('\n')) {
    const sub = /^ {4}not ok \d+ - (.*)$/.exec(line);
    if (sub) pending.push(rules.find(([prefix]) => sub[1].startsWith(prefix))?.[1] ?? sub[1]);
    const suite = /^(?:not )?ok \d+ - (\w+) contract: (.*)$/.exec(line);
    if (suite) {
      failed.push(...pending.map((rule) => `${suite[1]} ${suite[2]}: ${rule}`));
      pending = [];
    }
  }
  return { status: res.status, stdout: res.stdout, failed: failed.sort() };
}
