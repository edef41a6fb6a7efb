import { Type } from '@sinclair/typebox';
import { defineChunker, definePlugin } from '../../core/define.ts';
import { MarkdownChunker } from './markdown-chunker.ts';

export default definePlugin({
  name: '@refdesk/chunker-markdown',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineChunker({
      kind: 'markdown',
      description: 'Markdown, MDX and markdown-like text: sections by heading, code and info snippets.',
      options: Type.Object(
        {
          maxInfoTokens: Type.Integer({ minimum: 50, maximum: 5000, default: 400 }),
          maxDescriptionChars: Type.Integer({ minimum: 50, maximum: 5000, default: 600 }),
        },
        { additionalProperties: false },
      ),
      deps: {},
      create: (options) => new MarkdownChunker(options),
    }),
  ],
});
