import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFetch } from '../../../core/services.ts';
import { OpenApiSource } from '../../../plugins/source-openapi/openapi-source.ts';
import type { OpenApiOptions } from '../../../plugins/source-openapi/options.ts';
import { OperationChunker } from '../../../plugins/source-openapi/operation-chunker.ts';
import type { Snippet, SourceDocument } from '../../../core/contracts.ts';
import { listenOnLoopback } from '../../helpers/listen.ts';

export interface Route {
  status?: number;
  body?: string | Buffer;
  type?: string;
  etag?: string;
  /** Answer 304 when If-None-Match equals the etag. */
  conditional?: boolean;
}

/** A real HTTP server on 127.0.0.1 serving fixed routes; it records every request. */
export class SpecServer {
  readonly requests: Array<{ path: string; headers: IncomingMessage['headers'] }> = [];
  readonly routes = new Map<string, Route>();
  private server: Server | null = null;
  base = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      this.requests.push({ path, headers: req.headers });
      const route = this.routes.get(path);
      if (!route) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      if (route.conditional && route.etag && req.headers['if-none-match'] === route.etag) {
        res.writeHead(304, { etag: route.etag }).end();
        return;
      }
      res.writeHead(route.status ?? 200, {
        'content-type': route.type ?? 'application/json',
        ...(route.etag ? { etag: route.etag } : {}),
      });
      res.end(route.body ?? '');
    });
    this.base = await listenOnLoopback(this.server!);
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** A data directory with an uploads folder, removed by `cleanup`. */
export function makeDataDir(): { dataDir: string; uploads: string; put(name: string, text: string | Buffer): string; cleanup(): void } {
  const dataDir = mkdtempSync(join(tmpdir(), 'refdesk-openapi-'));
  const uploads = join(dataDir, 'uploads');
  mkdirSync(uploads);
  return {
    dataDir,
    uploads,
    put(name, text) {
      const file = join(uploads, name);
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

export function makeSource(dataDir: string, options: Partial<OpenApiOptions> = {}): OpenApiSource {
  return new OpenApiSource(options, { fetch: createFetch(10_000), env: { dataDir } });
}

export const chunker = new OperationChunker({ maxInfoTokens: 600 });

export function snippetsOf(docs: SourceDocument[]): Snippet[] {
  return docs.flatMap((d) => chunker.chunk(d));
}

export function codeSnippets(docs: SourceDocument[]): Snippet[] {
  return snippetsOf(docs).filter((s) => s.type === 'code');
}

/** A small Swagger 2.0 spec (the versions the fixtures do not cover are written here). */
export const SWAGGER_2 = {
  swagger: '2.0',
  info: { title: 'Todo API', version: '1.2.0', description: 'Keeps a list of things to do.' },
  host: 'todo.example.com',
  basePath: '/v1',
  schemes: ['https'],
  consumes: ['application/json'],
  produces: ['application/json'],
  securityDefinitions: { basicAuth: { type: 'basic' }, key: { type: 'apiKey', in: 'header', name: 'X-Todo-Key' } },
  security: [{ key: [] }],
  tags: [{ name: 'todos', description: 'Things to do.' }],
  paths: {
    '/todos/{todoId}': {
      parameters: [{ name: 'todoId', in: 'path', required: true, type: 'integer', format: 'int64', 'x-example': 42 }],
      get: {
        tags: ['todos'],
        operationId: 'getTodo',
        summary: 'Get one todo',
        parameters: [{ name: 'expand', in: 'query', required: true, type: 'string', enum: ['owner', 'tags'] }],
        responses: { '200': { description: 'The todo', schema: { $ref: '#/definitions/Todo' } }, '404': { description: 'No such todo' } },
      },
      put: {
        tags: ['todos'],
        operationId: 'updateTodo',
        summary: 'Replace a todo',
        security: [{ basicAuth: [] }],
        parameters: [{ name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/Todo' } }],
        responses: { '200': { description: 'Updated', schema: { $ref: '#/definitions/Todo' } } },
      },
    },
    '/todos/{todoId}/attachment': {
      post: {
        tags: ['todos'],
        operationId: 'uploadAttachment',
        consumes: ['multipart/form-data'],
        parameters: [
          { name: 'todoId', in: 'path', required: true, type: 'integer' },
          { name: 'file', in: 'formData', required: true, type: 'file', description: 'The file to attach' },
          { name: 'note', in: 'formData', type: 'string', default: 'none' },
        ],
        responses: { '201': { description: 'Attached' } },
      },
    },
  },
  definitions: {
    Todo: {
      type: 'object',
      required: ['title'],
      properties: {
        id: { type: 'integer', format: 'int64', readOnly: true },
        title: { type: 'string', example: 'Buy milk' },
        done: { type: 'boolean', default: false },
        priority: { type: 'string', enum: ['low', 'normal', 'high', 'urgent', 'later', 'someday', 'never', 'now'] },
      },
    },
  },
};

/** OpenAPI 3.1 with a circular schema (a tree of nodes) and a JSON-schema style nullable type. */
export const OPENAPI_31_CIRCULAR = {
  openapi: '3.1.0',
  info: { title: 'Tree API', version: '0.1.0' },
  servers: [{ url: 'https://{region}.tree.example.com/api', variables: { region: { default: 'eu' } } }],
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    schemas: {
      Node: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string' },
          parent: { $ref: '#/components/schemas/Node' },
          children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
          note: { type: ['string', 'null'] },
        },
      },
    },
  },
  security: [{ bearer: [] }],
  paths: {
    '/nodes': {
      post: {
        operationId: 'createNode',
        summary: 'Create a node',
        tags: ['Nodes'],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
        responses: { '201': { description: 'Created', content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } } },
      },
    },
    '/nodes/{name}': {
      get: {
        operationId: 'getNode',
        tags: ['Nodes'],
        parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'The node', content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } } },
      },
    },
  },
};
