// Checks the composer's completion helpers. Run: node complete_test.mjs
import { isDeepStrictEqual } from 'node:util';
import { triggerAt, attachmentsFor } from './complete.js';

const cases = [];
const check = (name, got, want) => cases.push([name, isDeepStrictEqual(got, want), got, want]);

check('an @ word', triggerAt('see @ma', 7), '@ma');
check('an @ word after an emoji', triggerAt('😀 @ma', 6), '@ma');
check('a / word starting the message', triggerAt('  /re', 5), '/re');
check('a / word later is no command', triggerAt('a /re', 5), '');
check('an @ inside a word', triggerAt('mail@x', 6), '');
check('plain text', triggerAt('hello', 5), '');

const file = { insertText: '@main.go', attachment: { type: 'resource', label: 'main.go', uri: 'file:///w/main.go', _meta: { k: 1 } } };
check('the range is found again, in UTF-16 units, on its line', attachmentsFor('日本😀\nsee @main.go now', [file]), [
  { type: 'resource', label: 'main.go', uri: 'file:///w/main.go', _meta: { k: 1 }, range: { start: { line: 1, character: 4 }, end: { line: 1, character: 12 } } },
]);
check('an item edited away is dropped', attachmentsFor('see main now', [file]), []);

let failed = 0;
for (const [name, ok, got, want] of cases) {
  if (!ok) {
    failed++;
    console.log(`FAIL ${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}
console.log(`${cases.length - failed} passed, ${failed} failed`);
if (failed) process.exit(1);
