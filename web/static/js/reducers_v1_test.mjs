// Checks the rules reducers.js applies at protocol 0.9.0 and later, which
// the 0.8.0 conformance fixtures do not cover. Run: node reducers_v1_test.mjs
import { isDeepStrictEqual } from 'node:util';
import { reduce } from './reducers.js';
import { kindOf } from './client.js';

const clock = () => { throw new Error('the 1.x chat reducer must not read a clock'); };
const modern = { modern: true };
const user = { text: 'hi', origin: { kind: 'user' } };
const chat0 = { resource: 'ahp-chat:/c', title: 'Chat', status: 1, modifiedAt: '2026-01-01T00:00:00.000Z', turns: [] };
const cases = [];
const check = (name, got, want) => cases.push([name, isDeepStrictEqual(got, want), got, want]);

let s = reduce('chat', chat0, { type: 'chat/turnStarted', turnId: 't1', startedAt: '2026-01-01T00:00:10.000Z', message: user }, clock, modern);
check('turnStarted takes modifiedAt from startedAt', s.modifiedAt, '2026-01-01T00:00:10.000Z');
s = reduce('chat', s, { type: 'chat/responsePart', turnId: 't1', part: { kind: 'markdown', id: 'm', content: '' } }, clock, modern);
const failed = reduce('chat', s, { type: 'chat/error', turnId: 't1', duration: 1500, part: { kind: 'error', error: { errorType: 'x', message: 'boom' }, resumable: true } }, clock, modern);
check('an error ends the turn at start plus duration', failed.modifiedAt, '2026-01-01T00:00:11.500Z');
check('the error is the last part of the turn', failed.turns[0].responseParts.at(-1), { kind: 'error', error: { errorType: 'x', message: 'boom' }, resumable: true });
check('the turn has no error member', failed.turns[0].error, undefined);
check('the chat is in error', failed.status & 0x1f, 2);
const older = reduce('chat', s, { type: 'chat/error', turnId: 't1', duration: 0, error: { errorType: 'x', message: 'old shape' } }, clock, modern);
check('an error of the older shape becomes an error part', older.turns[0].responseParts.at(-1), { kind: 'error', error: { errorType: 'x', message: 'old shape' } });
const resumed = reduce('chat', failed, { type: 'chat/turnResume', turnId: 't1' }, clock, modern);
check('a resumable error resumes the turn', resumed.activeTurn && resumed.activeTurn.id, 't1');
check('resuming leaves no completed turn', resumed.turns.length, 0);
check('the resumed chat is in progress', resumed.status & 0x1f, 8);
const done = reduce('chat', s, { type: 'chat/turnComplete', turnId: 't1', duration: 250 }, clock, modern);
check('a turn completes at start plus duration', done.modifiedAt, '2026-01-01T00:00:10.250Z');
check('a completed turn cannot resume', reduce('chat', done, { type: 'chat/turnResume', turnId: 't1' }, clock, modern), done);
const read = reduce('chat', done, { type: 'chat/isReadChanged', isRead: true }, clock, modern);
check('chat/isReadChanged sets the flag', read.status & 32, 32);

const term0 = { title: 'T', content: [], lifecycle: { status: 'running' }, claim: { kind: 'client', clientId: 'c' } };
check('an exit makes the lifecycle exited with its code', reduce('terminal', term0, { type: 'terminal/exited', exitCode: 3 }, clock, modern).lifecycle, { status: 'exited', exitCode: 3 });
check('an exit without a code keeps none', reduce('terminal', term0, { type: 'terminal/exited' }, clock, modern).lifecycle, { status: 'exited' });
check('an exit sets no exitCode member', 'exitCode' in reduce('terminal', term0, { type: 'terminal/exited', exitCode: 0 }, clock, modern), false);

const cat = [{ label: 'Uncommitted Changes', uriTemplate: 'ahp-session:/s/changeset/uncommitted/x', changeKind: 'uncommitted' }];
check('chat/changesetsChanged replaces the catalogue', reduce('chat', chat0, { type: 'chat/changesetsChanged', changesets: cat }, clock, modern).changesets, cat);
check('chat/changesetsChanged without a list clears it', 'changesets' in reduce('chat', { ...chat0, changesets: cat }, { type: 'chat/changesetsChanged' }, clock, modern), false);

check('a changeset below a session is a changeset channel', kindOf('ahp-session:/s1/changeset/uncommitted/abc'), 'changeset');
check('annotations below a session are an annotations channel', kindOf('ahp-session:/s1/annotations'), 'annotations');
check('a session is a session channel', kindOf('ahp-session:/s1'), 'session');
check('a session a client named is a session channel', kindOf('echo:/s1'), 'session');
check('annotations below a named session are an annotations channel', kindOf('echo:/s1/annotations'), 'annotations');
check('a changeset channel', kindOf('ahp-changeset:/s1/uncommitted/abc'), 'changeset');
check('an unknown ahp scheme is unknown', kindOf('ahp-future:/x'), 'unknown');

const sess = { provider: 'echo', title: 'S', status: 1, lifecycle: 'creating', activeClients: [], workingDirectories: ['file:///a', 'file:///b'],
  chats: [{ resource: 'ahp-chat:/1' }, { resource: 'ahp-chat:/2' }] };
check('creationFailed is the failed lifecycle', reduce('session', sess, { type: 'session/creationFailed', error: { errorType: 'x', message: 'no' } }, clock, modern).lifecycle, 'failed');
check('chats reorder', reduce('session', sess, { type: 'session/chatsReordered', chats: ['ahp-chat:/2', 'ahp-chat:/1'] }, clock, modern).chats.map((c) => c.resource), ['ahp-chat:/2', 'ahp-chat:/1']);
check('an incomplete order is ignored', reduce('session', sess, { type: 'session/chatsReordered', chats: ['ahp-chat:/2'] }, clock, modern), sess);
check('a working directory is replaced in place', reduce('session', sess, { type: 'session/workingDirectoryReplaced', directory: 'file:///a', replacement: 'file:///c' }, clock, modern).workingDirectories, ['file:///c', 'file:///b']);
check('a replacement already present moves to the place', reduce('session', sess, { type: 'session/workingDirectoryReplaced', directory: 'file:///a', replacement: 'file:///b' }, clock, modern).workingDirectories, ['file:///b']);

let passed = 0; let failedN = 0;
for (const [name, ok, got, want] of cases) {
  if (ok) passed++;
  else { failedN++; console.log(`FAIL ${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
}
console.log(`${passed} passed, ${failedN} failed`);
process.exit(failedN ? 1 : 0);
