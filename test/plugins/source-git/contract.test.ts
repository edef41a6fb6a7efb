import { after, before } from 'node:test';
import { runSourceContract } from '../../../core/testing/index.ts';
import { gitFixture, type GitFixture } from './helpers.ts';

let fx: GitFixture;
before(async () => {
  fx = await gitFixture();
  fx.repo('contract')
    .commit({ 'README.md': '# Contract\n\nA repository for the Source contract.\n', 'docs/a.md': '# A\n', 'docs/b.rst': 'B\n=\n\nText.\n' })
    .publish();
});
after(() => fx?.close());

runSourceContract('git', async () => ({ source: fx.source(), spec: { url: fx.url('contract') } }), { libraryId: '/local/contract' });
