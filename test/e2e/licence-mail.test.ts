/**
 * The trial issuer mailing keys (`refdesk license serve-issuer --smtp-url ... --mail-from ...`) as
 * a real process, against a loopback SMTP server (smtp-server) run by the test: the mail carries
 * a key that verifies against the issuer's public key; a repeated email answers the same 202,
 * byte for byte, and sends nothing; a refusing SMTP server is logged without the password and
 * the client still gets the same 202.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { parseIssuerPublicKey, verifyLicence } from '../../server/licence-keys.ts';
import { makeDataDir, removeDataDir, runRefdesk, spawnRefdesk, stopAll, stopProcess, type RefdeskProcess } from './refdesk-process.ts';

const dirs: string[] = [];
const smtps: SMTPServer[] = [];
after(async () => {
  await stopAll();
  for (const s of smtps) await new Promise<void>((r) => s.close(() => r()));
  for (const d of dirs) removeDataDir(d);
});
const newDir = () => {
  const d = makeDataDir('refdesk-licence-mail-');
  dirs.push(d);
  return d;
};
const NO_LICENCE = { LICENSE_KEY: '', LICENSE_ISSUER_KEYS: '', SMTP_URL: '', MAIL_FROM: '' };
const license = (args: string[], dir: string, env: Record<string, string> = {}) => runRefdesk(['license', ...args], dir, 60_000, { ...NO_LICENCE, ...env });

// A planted password with characters that must be percent-encoded in the URL.
const USER = 'issuer-mailer';
const PASSWORD = 'Pl4nted:Smtp/Secret%pw';
const ENCODED = encodeURIComponent(PASSWORD);
const passwordForms = [PASSWORD, ENCODED, Buffer.from(PASSWORD).toString('base64'), Buffer.from(`\0${USER}\0${PASSWORD}`).toString('base64')];

interface Received {
  from: string;
  to: string[];
  raw: string;
}

/** A loopback SMTP server: plain SMTP (no STARTTLS), AUTH required, `accept` decides the login. */
async function startSmtp(accept: boolean): Promise<{ port: number; mails: Received[]; logins: number }> {
  const state = { port: 0, mails: [] as Received[], logins: 0 };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    logger: false,
    onAuth(auth, _session, cb) {
      state.logins++;
      if (accept && auth.username === USER && auth.password === PASSWORD) return cb(null, { user: USER });
      cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        state.mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        cb();
      });
    },
  });
  smtps.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  state.port = (server.server.address() as { port: number }).port;
  return state;
}

/** The text part of a single-part mail, its transfer encoding undone. */
function mailText(raw: string): string {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split);
  let body = raw.slice(split + 4);
  const enc = /^content-transfer-encoding:\s*(\S+)/im.exec(head)?.[1]?.toLowerCase();
  if (enc === 'quoted-printable') body = Buffer.from(body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');
  else if (enc === 'base64') body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

async function until<T>(what: string, get: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ask = (base: string, body: string | object) =>
  fetch(`${base}/api/v2/license/trial`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) }).then(async (r) => ({
    status: r.status,
    contentType: r.headers.get('content-type'),
    text: await r.text(),
  }));

async function startIssuer(dir: string, smtpPort: number, how: 'flags' | 'env'): Promise<{ p: RefdeskProcess; base: string }> {
  const url = `smtp://${USER}:${ENCODED}@127.0.0.1:${smtpPort}`;
  const from = 'Refdesk licences <licences@issuer.example>';
  const args = ['license', 'serve-issuer', '--signing-key', join(dir, 'issuer', 'issuer.key'), '--port', '0', '--per-hour', '20'];
  const p = how === 'flags' ? spawnRefdesk([...args, '--smtp-url', url, '--mail-from', from], dir, NO_LICENCE) : spawnRefdesk(args, dir, { ...NO_LICENCE, SMTP_URL: url, MAIL_FROM: from });
  const m = await p.waitFor('stdout', /listening on port (\d+)/, 30_000);
  assert.match(p.stdout(), new RegExp(`keys mailed through smtp://127\\.0\\.0\\.1:${smtpPort}\\)`));
  return { p, base: `http://127.0.0.1:${m[1]}` };
}

const noPassword = (text: string, where: string) => {
  for (const form of passwordForms) assert.ok(!text.includes(form), `${where} holds the SMTP password (${form.slice(0, 6)}...): ${text}`);
};

describe('the trial issuer mails keys through SMTP', () => {
  let dir: string;
  let pub: string;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let issuer: RefdeskProcess;
  let base: string;

  before(async () => {
    dir = newDir();
    assert.equal((await license(['keygen', '--out', join(dir, 'issuer')], dir)).code, 0);
    pub = readFileSync(join(dir, 'issuer', 'issuer.pub'), 'utf8').trim();
    smtp = await startSmtp(true);
    ({ p: issuer, base } = await startIssuer(dir, smtp.port, 'flags'));
  });
  after(async () => {
    if (issuer) await stopProcess(issuer.child);
  });

  test('202 {message}; the mail carries a trial key that verifies against the issuer key; a repeated email gets the same bytes and no second mail', async () => {
    const first = await ask(base, { email: 'Dev@Example.com', organization: 'Example Ltd' });
    assert.equal(first.status, 202, first.text);
    const body = JSON.parse(first.text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['message']);
    assert.match(String(body.message), /by email/);
    assert.ok(!first.text.includes('rdk1.'), 'the key must not be in the answer');

    const mail = await until('the trial mail', () => smtp.mails[0]);
    assert.equal(mail.from, 'licences@issuer.example');
    assert.deepEqual(mail.to.map((t) => t.toLowerCase()), ['dev@example.com']);
    const text = mailText(mail.raw);
    const key = /rdk1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/.exec(text)?.[0];
    assert.ok(key, text);
    const verified = verifyLicence(key, [parseIssuerPublicKey(pub)]);
    assert.equal(verified.payload.licensee, 'Example Ltd');
    assert.equal(verified.payload.email, 'dev@example.com');
    assert.equal(verified.payload.trial, true);
    const days = (Date.parse(verified.payload.expiresAt) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, String(days));
    await issuer.waitFor('stdout', /mailed the trial key for dev@example\.com/, 20_000);

    // The same email in another case: the same answer, byte for byte, and nothing sent.
    const second = await ask(base, { email: 'dev@example.COM', organization: 'Someone Else' });
    assert.equal(second.status, first.status);
    assert.equal(second.contentType, first.contentType);
    assert.equal(second.text, first.text);
    await issuer.waitFor('stdout', /dev@example\.com asked again; its trial key was mailed less than a day ago, not sent again/, 20_000);
    assert.equal(smtp.mails.length, 1);

    const record = JSON.parse(readFileSync(join(dir, 'issuer', 'issued-trials.json'), 'utf8'));
    assert.deepEqual(Object.keys(record.trials), ['dev@example.com']);
    assert.equal(record.trials['dev@example.com'].organization, 'Example Ltd');
    assert.ok(record.trials['dev@example.com'].mailedAt);
  });

  test('bad JSON, a bad email or no organization stay 400', async () => {
    const badEmail = await ask(base, { email: 'not-an-email', organization: 'X' });
    assert.equal(badEmail.status, 400);
    assert.match(JSON.parse(badEmail.text).message, /valid email address/);
    const badJson = await ask(base, '{"email": ');
    assert.equal(badJson.status, 400);
    assert.match(JSON.parse(badJson.text).message, /must be JSON/);
    const noOrg = await ask(base, { email: 'x@example.com' });
    assert.equal(noOrg.status, 400);
    assert.match(JSON.parse(noOrg.text).message, /organization/);
  });

  test('refdesk license trial says the key was mailed (nothing on stdout); the issuer log never holds the password', async () => {
    const before = smtp.mails.length;
    const r = await license(['trial', '--issuer', base, '--email', 'cli@example.com', '--organization', 'CLI Org'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /The issuer mails the trial key to cli@example\.com/);
    const mail = await until('the second trial mail', () => smtp.mails[before]);
    assert.deepEqual(mail.to, ['cli@example.com']);
    noPassword(issuer.stdout() + issuer.stderr(), 'the issuer log');
  });

  test('SMTP settings are checked at start, without quoting the password', async () => {
    const key = join(dir, 'issuer', 'issuer.key');
    const noFrom = await license(['serve-issuer', '--signing-key', key, '--port', '0', '--smtp-url', `smtp://${USER}:${ENCODED}@127.0.0.1:1`], dir);
    assert.equal(noFrom.code, 1);
    assert.match(noFrom.stderr, /--mail-from/);
    const badScheme = await license(['serve-issuer', '--signing-key', key, '--port', '0', '--smtp-url', `ftp://${USER}:${ENCODED}@127.0.0.1:1`, '--mail-from', 'a@example.com'], dir);
    assert.equal(badScheme.code, 1);
    assert.match(badScheme.stderr, /must start with smtp:\/\/ or smtps:\/\//);
    const notUrl = await license(['serve-issuer', '--signing-key', key, '--port', '0', '--mail-from', 'a@example.com'], dir, { SMTP_URL: `${PASSWORD} not a url` });
    assert.equal(notUrl.code, 1);
    // "Pl4nted:..." parses as a URL of scheme "pl4nted:": the error must not quote it either.
    assert.match(notUrl.stderr, /SMTP_URL\) must start with smtp:\/\//);
    assert.doesNotMatch(notUrl.stderr, /pl4nted/i);
    const notUrlAtAll = await license(['serve-issuer', '--signing-key', key, '--port', '0', '--mail-from', 'a@example.com'], dir, { SMTP_URL: `//${ENCODED}@` });
    assert.equal(notUrlAtAll.code, 1);
    assert.match(notUrlAtAll.stderr, /SMTP_URL\) is not a URL/);
    const badFrom = await license(['serve-issuer', '--signing-key', key, '--port', '0', '--smtp-url', `smtp://${USER}:${ENCODED}@127.0.0.1:1`, '--mail-from', 'nobody'], dir);
    assert.equal(badFrom.code, 1);
    assert.match(badFrom.stderr, /--mail-from \(or MAIL_FROM\) must be an address/);
    const fromAlone = await license(['serve-issuer', '--signing-key', key, '--port', '0', '--mail-from', 'a@example.com'], dir);
    assert.equal(fromAlone.code, 1);
    assert.match(fromAlone.stderr, /--mail-from needs --smtp-url/);
    for (const r of [noFrom, badScheme, notUrl, notUrlAtAll, badFrom]) noPassword(r.stdout + r.stderr, 'a start-up error');
  });
});

describe('the trial issuer with an SMTP server that refuses the login', () => {
  test('the client still gets the same 202; the issuer log says why, without the password; a later request tries again', async () => {
    const dir = newDir();
    assert.equal((await license(['keygen', '--out', join(dir, 'issuer')], dir)).code, 0);
    const smtp = await startSmtp(false);
    const { p, base } = await startIssuer(dir, smtp.port, 'env');
    try {
      const first = await ask(base, { email: 'refused@example.com', organization: 'Refused Inc' });
      assert.equal(first.status, 202, first.text);
      const other = await ask(base, { email: 'other@example.com', organization: 'Other Inc' });
      assert.equal(other.text, first.text);
      const line = (await p.waitFor('stderr', /could not mail the trial key for refused@example\.com[^\n]*/, 30_000))[0];
      assert.match(line, /through smtp:\/\/127\.0\.0\.1:\d+: Invalid login/);
      assert.match(line, /535/);
      await p.waitFor('stderr', /could not mail the trial key for other@example\.com/, 30_000);
      assert.equal(smtp.mails.length, 0);
      // The daily mark was taken back: asking again tries to mail again (and is answered the same).
      const logins = smtp.logins;
      const again = await ask(base, { email: 'refused@example.com', organization: 'Refused Inc' });
      assert.equal(again.text, first.text);
      await until('a second login attempt', () => (smtp.logins > logins ? true : undefined));
      await until('the second refusal in the log', () => (p.stderr().match(/could not mail the trial key for refused@example\.com/g)?.length === 2 ? true : undefined));
      noPassword(p.stdout() + p.stderr(), 'the issuer log');
    } finally {
      await stopProcess(p.child);
    }
  });
});
