/** What the contract suites share: each test makes a fresh fixture and cleans it up, pass or fail. */
export async function withFixture<F extends { cleanup?(): Promise<void> }>(make: () => Promise<F> | F, fn: (fixture: F) => Promise<void> | void): Promise<void> {
  const fixture = await make();
  try {
    await fn(fixture);
  } finally {
    await fixture.cleanup?.();
  }
}
