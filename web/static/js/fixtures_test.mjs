// Runs the protocol's reducer conformance fixtures against reducers.js:
//   node fixtures_test.mjs DIR
// Each fixture's actions are applied in order to its initial state with the
// clock frozen at 9999 ms; the result must equal the expected state once
// null members are removed on both sides. A second pass checks that no
// reducer modified a state it was given. Prints one line per failure and
// "N passed, N failed".
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { reduce } from './reducers.js';

const dir = process.argv[2];
const now = () => new Date(9999).toISOString();
const strip = (v) => JSON.parse(JSON.stringify(v, (k, x) => (x === null ? undefined : x)));

let passed = 0; let failed = 0;
for (const name of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const fx = JSON.parse(readFileSync(join(dir, name), 'utf8'));
  const kind = fx.reducer === 'resourceWatch' ? 'resourceWatch' : fx.reducer;
  let state = fx.initial;
  const states = [state];
  const frozen = [JSON.stringify(state)];
  for (const a of fx.actions) {
    state = reduce(kind, state, a, now);
    states.push(state);
    frozen.push(JSON.stringify(state));
  }
  const got = strip(state); const want = strip(fx.expected);
  const mutated = states.findIndex((s, i) => JSON.stringify(s) !== frozen[i]);
  if (!isDeepStrictEqual(got, want)) {
    failed++;
    console.log(`FAIL ${name}: ${fx.description}\n  want ${JSON.stringify(want)}\n  got  ${JSON.stringify(got)}`);
  } else if (mutated >= 0) {
    failed++;
    console.log(`FAIL ${name}: state ${mutated} was modified by a later action`);
  } else {
    passed++;
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
