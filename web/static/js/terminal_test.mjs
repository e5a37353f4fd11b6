// Checks the terminal view's pure helpers. Run: node terminal_test.mjs
import { isDeepStrictEqual } from 'node:util';
import { raw, trimContent } from './terminal.js';

const cases = [];
const check = (name, got, want) => cases.push([name, isDeepStrictEqual(got, want), got, want]);

const parts = [
  { type: 'unclassified', value: 'prompt$ ls\r\n' },
  { type: 'command', commandId: 'c1', commandLine: 'ls', output: 'a\r\nb\r\n', timestamp: 1, isComplete: true },
  { type: 'unclassified', value: 'prompt$ ' },
];
check('raw joins the parts in order', raw({ content: parts }), 'prompt$ ls\r\na\r\nb\r\nprompt$ ');
check('content within the limit is kept as it is', trimContent(parts, 1000), parts);
check('parts that fit exactly are kept, and nothing before them', trimContent(parts, 14), parts.slice(1));
const cut = trimContent(parts, 12);
check('a trim keeps the last parts whole', cut.slice(1), parts.slice(2));
check('and cuts the part it falls in where a line begins', cut[0], { ...parts[1], output: 'b\r\n' });
check('a cut inside a line moves to the next line', trimContent([{ type: 'unclassified', value: 'aaaa\nbbbb\n' }], 7), [{ type: 'unclassified', value: 'bbbb\n' }]);
check('a part left empty by the cut is dropped', trimContent(parts, 10), parts.slice(2));
check('a trim never keeps more than the limit', raw({ content: trimContent(parts, 9) }).length <= 9, true);
check('the input is not modified', parts[1].output, 'a\r\nb\r\n');
const one = [{ type: 'unclassified', value: 'x'.repeat(100) }];
check('a part with no line break is cut to the limit', trimContent(one, 10), [{ type: 'unclassified', value: 'x'.repeat(10) }]);

let failed = 0;
for (const [name, ok, got, want] of cases) {
  if (!ok) { failed++; console.log(`FAIL ${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
}
console.log(`${cases.length - failed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
