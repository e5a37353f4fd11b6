// Checks the automation reducers and the page's reading of schedules.
// Run: node automations_test.mjs
import { isDeepStrictEqual } from 'node:util';
import { reduce } from './reducers.js';
import { kindOf } from './client.js';
import { scheduleText, runStatus } from './automations.js';

const cases = [];
const check = (name, got, want) => cases.push([name, isDeepStrictEqual(got, want), got, want]);

check('the catalogue is an automation channel', kindOf('ahp-automations://'), 'automation');
check('a run is an automationRun channel', kindOf('ahp-automation-run:/r1'), 'automationRun');

const a1 = { resource: 'ahp-automation:/a', definition: { title: 'A' }, runs: [], operations: [] };
const a2 = { resource: 'ahp-automation:/b', definition: { title: 'B' }, runs: [], operations: [] };
let cat = { entries: [] };
cat = reduce('automation', cat, { type: 'automation/set', automation: a1 });
cat = reduce('automation', cat, { type: 'automation/set', automation: a2 });
const a1b = { ...a1, definition: { title: 'A2' } };
const cat2 = reduce('automation', cat, { type: 'automation/set', automation: a1b });
check('set appends an unseen automation', cat.entries.map((e) => e.resource), ['ahp-automation:/a', 'ahp-automation:/b']);
check('set replaces in place', cat2.entries, [a1b, a2]);
check('set does not write to its input', cat.entries[0], a1);
check('a create request changes nothing', reduce('automation', cat, { type: 'automation/createRequested', resource: 'ahp-automation:/c', definition: {} }), cat);
check('removed removes', reduce('automation', cat, { type: 'automation/removed', resource: 'ahp-automation:/a' }).entries, [a2]);
check('removing an unknown one is a no-op', reduce('automation', cat, { type: 'automation/removed', resource: 'ahp-automation:/x' }), cat);

let run = { resource: 'ahp-automation-run:/r', automation: 'ahp-automation:/a', origin: { kind: 'manual' }, lifecycle: { status: 'pending', createdAt: 't0' }, sessions: [] };
run = reduce('automationRun', run, { type: 'automationRun/lifecycleChanged', lifecycle: { status: 'running', createdAt: 't0', startedAt: 't1' } });
run = reduce('automationRun', run, { type: 'automationRun/sessionSet', session: 's:/1' });
const again = reduce('automationRun', run, { type: 'automationRun/sessionSet', session: 's:/1' });
run = reduce('automationRun', run, { type: 'automationRun/primarySessionChanged', primarySession: 's:/1' });
check('lifecycle is replaced', run.lifecycle.status, 'running');
check('setting a linked session is a no-op', again.sessions, ['s:/1']);
check('the primary session is set', run.primarySession, 's:/1');
const gone = reduce('automationRun', run, { type: 'automationRun/sessionRemoved', session: 's:/1' });
check('removing the primary session clears it', [gone.sessions, gone.primarySession], [[], undefined]);
check('cancel requests change nothing', reduce('automationRun', run, { type: 'automationRun/cancelRequested' }), run);

check('a manual-only automation', scheduleText({ triggers: [] }), 'run by hand');
check('a schedule with its zone', scheduleText({ triggers: [{ kind: 'schedule', id: 's', schedule: { expression: '0 9 * * 1-5', timeZone: 'Europe/Berlin' } }] }), '0 9 * * 1-5 (Europe/Berlin)');
check('a failed run says why', runStatus({ status: 'failed', error: { message: 'boom' } }), 'failed: boom');
check('a completed run', runStatus({ status: 'completed' }), 'completed');

let failed = 0;
for (const [name, ok, got, want] of cases) {
  if (!ok) { failed++; console.log(`FAIL ${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
}
console.log(`${cases.length - failed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
