/**
 * A raw MCP `initialize` POST to `<base>/mcp` by node:http, with the headers the test chooses
 * (Host and Origin included, which fetch would not let it set): for the origin, host and key
 * checks in front of the MCP endpoint. `body` is the JSON answer, or undefined when it is not JSON.
 */
import { request } from 'node:http';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

export function rawMcpRequest(base: string, headers: Record<string, string>, method = 'POST'): Promise<{ status: number; body: any; text: string }> {
  const u = new URL(base + '/mcp');
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => {
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body, text });
        });
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? INITIALIZE : undefined);
  });
}
