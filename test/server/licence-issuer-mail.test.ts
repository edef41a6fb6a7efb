/**
 * The mailing trial issuer in process (its handler on a real 127.0.0.1 HTTP server, mailing
 * through a loopback smtp-server), with a movable clock: a repeated email is mailed again at most
 * once a day, with the same key; a failed send takes the daily mark back.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { generateIssuerKeyPair, verifyLicence } from '../../server/licence-keys.ts';
import { issuerHandler, MAILED_MESSAGE, type IssuerHandler } from '../../server/licence-issuer.ts';
import { createTrialMailer } from '../../server/licence-issuer-mail.ts';

const HOUR = 3_600_000;

describe('the mailing trial issuer, over days', () => {
  const issuer = generateIssuerKeyPair();
  const mails: string[] = [];
  let refuse = false;
  let smtp: SMTPServer;
  let http: Server;
  let handler: IssuerHandler;
  let base: string;
  let dir: string;
  let clock = Date.parse('2026-03-01T09:00:00Z');
  const logs: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'refdesk-issuer-mail-'));
    smtp = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo(_address, _session, cb) {
        if (refuse) return cb(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
        cb();
      },
      onData(stream, _session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push(Buffer.concat(chunks).toString('utf8'));
          cb();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    const smtpPort = (smtp.server.address() as { port: number }).port;
    handler = issuerHandler({
      issuer,
      statePath: join(dir, 'issued-trials.json'),
      now: () => new Date(clock),
      mailer: createTrialMailer({ url: `smtp://127.0.0.1:${smtpPort}`, from: 'licences@issuer.example' }),
      log: (level, line) => logs.push(`${level}: ${line}`),
    });
    http = createServer(handler);
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  });
  after(async () => {
    await new Promise<void>((r) => http.close(() => r()));
    await new Promise<void>((r) => smtp.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (email: string) => {
    const r = await fetch(`${base}/api/v2/license/trial`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, organization: 'Day Org' }) });
    const text = await r.text();
    await handler.idle();
    return { status: r.status, text };
  };
  const keyIn = (raw: string) => /rdk1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/.exec(raw.replace(/=\r?\n/g, ''))?.[0];
  const record = () => JSON.parse(readFileSync(join(dir, 'issued-trials.json'), 'utf8')).trials as Record<string, { mailedAt?: string }>;
  const answer = JSON.stringify({ message: MAILED_MESSAGE });

  test('mailed once; again within a day: nothing; after a day: the same key again', async () => {
    assert.deepEqual(await ask('day@example.com'), { status: 202, text: answer });
    assert.equal(mails.length, 1);
    const key = keyIn(mails[0]);
    assert.ok(key);
    assert.equal(verifyLicence(key, [issuer.publicKey]).payload.expiresAt, '2026-03-31T09:00:00.000Z');

    clock += 23 * HOUR;
    assert.deepEqual(await ask('DAY@example.com'), { status: 202, text: answer });
    assert.equal(mails.length, 1);
    assert.ok(logs.some((l) => /day@example\.com asked again; .*not sent again/.test(l)), logs.join('\n'));

    clock += 2 * HOUR;
    assert.deepEqual(await ask('day@example.com'), { status: 202, text: answer });
    assert.equal(mails.length, 2);
    assert.equal(keyIn(mails[1]), key, 'the same trial, not a new one');
    assert.equal(record()['day@example.com'].mailedAt, new Date(clock).toISOString());
  });

  test('a refused send is logged and its daily mark taken back, so the next request mails', async () => {
    refuse = true;
    assert.deepEqual(await ask('bounce@example.com'), { status: 202, text: answer });
    assert.ok(logs.some((l) => /^error: could not mail the trial key for bounce@example\.com through smtp:\/\/127\.0\.0\.1:\d+: .*550/.test(l)), logs.join('\n'));
    assert.equal(record()['bounce@example.com'].mailedAt, undefined);
    refuse = false;
    const before = mails.length;
    clock += HOUR;
    assert.deepEqual(await ask('bounce@example.com'), { status: 202, text: answer });
    assert.equal(mails.length, before + 1);
    assert.ok(record()['bounce@example.com'].mailedAt);
  });
});
