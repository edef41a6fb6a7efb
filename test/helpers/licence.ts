/**
 * A test licence issuer, generated once per test process: keys it signs are trusted by servers
 * that get `testIssuerEnv()` (child processes) or `testLicence()` (in-process createApp).
 */
import { addDays, generateIssuerKeyPair, signLicence } from '../../server/licence-keys.ts';
import { InstalledLicence, loadLicence } from '../../server/licence.ts';

export const testIssuer = generateIssuerKeyPair();

export interface TestLicenceOptions {
  /** Days until expiry from now (negative: expired that many days ago). Default 365. */
  days?: number;
  trial?: boolean;
  licensee?: string;
  email?: string;
  plan?: string;
}

export function testLicenceKey(opts: TestLicenceOptions = {}): string {
  const now = new Date();
  const expiresAt = addDays(now, opts.days ?? 365);
  const issuedAt = expiresAt.getTime() > now.getTime() ? now : addDays(expiresAt, -30);
  return signLicence(testIssuer, {
    licensee: opts.licensee ?? 'Refdesk tests',
    email: opts.email ?? 'tests@example.com',
    plan: opts.plan ?? 'test',
    trial: opts.trial ?? false,
    issuedAt,
    expiresAt,
  });
}

/** The environment of a child server trusting the test issuer, with a licence of `opts`. */
export function testIssuerEnv(opts: TestLicenceOptions = {}): { LICENSE_KEY: string; LICENSE_ISSUER_KEYS: string } {
  return { LICENSE_KEY: testLicenceKey(opts), LICENSE_ISSUER_KEYS: testIssuer.publicKey.line };
}

/** The licence an in-process app gets (createApp(kernel, { access: { licence } })). */
export function testLicence(opts: TestLicenceOptions = {}, now?: () => Date): InstalledLicence {
  return loadLicence(testIssuerEnv(opts), now);
}
