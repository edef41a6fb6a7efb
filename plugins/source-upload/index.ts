import { definePlugin, defineSource } from '../../core/define.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { uploadOptionsSchema, uploadSpecSchema } from './schema.ts';
import { uploadCliTarget } from './cli-target.ts';
import { UploadSource } from './upload-source.ts';

export default definePlugin({
  name: '@refdesk/source-upload',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineSource({
      kind: 'upload',
      title: 'Uploaded files or archive',
      addPayload: 'files',
      policyCategory: 'uploaded_files',
      cliTarget: uploadCliTarget,
      idPrefix: 'docs',
      description: 'A local folder, a documentation file, or a .zip / .tar.gz / .tgz archive becomes a /docs/<name> library.',
      options: uploadOptionsSchema,
      specSchema: uploadSpecSchema,
      deps: { logger: Tokens.Logger },
      create(options, deps) {
        return new UploadSource(options, deps);
      },
    }),
  ],
});
