import { defineChunker, definePlugin } from '../../core/define.ts';
import { MarkdownChunker, type MarkdownChunkerOptions } from './markdown-chunker.ts';

export default definePlugin({
  name: '@refdesk/chunker-markdown',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineChunker<MarkdownChunkerOptions, {}>({
      kind: 'markdown',
      description: 'Markdown, MDX and markdown-like text: sections by heading, code and info snippets.',
      options: {
        type: 'object',
        additionalProperties: false,
        properties: {
          maxInfoTokens: { type: 'integer', minimum: 50, maximum: 5000, default: 400 },
          maxDescriptionChars: { type: 'integer', minimum: 50, maximum: 5000, default: 600 },
        },
      },
      deps: {},
      create: (options) => new MarkdownChunker(options),
    }),
  ],
});
