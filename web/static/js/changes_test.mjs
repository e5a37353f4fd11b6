// Checks the changeset view's URI template handling. Run: node changes_test.mjs
import { isDeepStrictEqual } from 'node:util';
import { templateVars, expand } from './changes.js';

const cases = [];
const check = (name, got, want) => cases.push([name, isDeepStrictEqual(got, want), got, want]);

check('a static template has no variables', templateVars('ahp-session:/s/changeset/uncommitted/x'), []);
check('a per-turn template needs a turn', templateVars('ahp-session:/s/changeset/turn/{turnId}'), ['turnId']);
check('a comparison needs both turns', templateVars('x:/{originalTurnId}..{modifiedTurnId}'), ['originalTurnId', 'modifiedTurnId']);
check('half a comparison cannot be expanded', templateVars('x:/{originalTurnId}'), null);
check('an unknown variable cannot be expanded', templateVars('x:/{branch}'), null);
check('expansion fills the variables', expand('x:/turn/{turnId}', { turnId: 't-1' }), 'x:/turn/t-1');
check('expansion percent-encodes all but unreserved characters', expand('x:/{turnId}', { turnId: "a b/c!'()*~._-" }), 'x:/a%20b%2Fc%21%27%28%29%2A~._-');

let failed = 0;
for (const [name, ok, got, want] of cases) {
  if (!ok) { failed++; console.log(`FAIL ${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
}
console.log(`${cases.length - failed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
