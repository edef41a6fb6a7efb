/**
 * The rows a person would see on a terminal after some output: \r, \n and ESC[K (erase to the
 * end of the row) interpreted. `strict`: any other escape sequence fails the test (else it is
 * dropped); `columns`: a row running past this width fails the test.
 */
import assert from 'node:assert/strict';

export function terminalRows(raw: string, opts: { strict?: boolean; columns?: number } = {}): string[] {
  const rows: string[] = [''];
  let col = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    const row = rows.length - 1;
    if (c === '\r') col = 0;
    else if (c === '\n') {
      rows.push('');
      col = 0;
    } else if (c === '\x1b') {
      const m = /^\x1b\[[0-9;?]*[A-Za-z]/.exec(raw.slice(i));
      if (opts.strict) assert.equal(m?.[0], '\x1b[K', 'only ESC[K is used');
      if (m?.[0] === '\x1b[K') rows[row] = rows[row].slice(0, col);
      i += (m?.[0].length ?? 1) - 1;
    } else {
      if (opts.columns !== undefined) assert.ok(col < opts.columns, `row ${row} wraps past ${opts.columns} columns: ${JSON.stringify(rows[row] + c)}`);
      rows[row] = rows[row].slice(0, col) + c + rows[row].slice(col + 1);
      col++;
    }
  }
  return rows;
}
