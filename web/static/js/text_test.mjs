// Checks the page's text helpers. Run: node text_test.mjs
import { isDeepStrictEqual } from 'node:util';
import { plainTitle, agentLabel, agentState, signInMethods, prettyInput, elapsedText, refText, mcpServers, mcpToggle } from './text.js';

const cases = [];
const check = (name, got, want) => cases.push([name, isDeepStrictEqual(got, want), got, want]);

check('a heading loses its hashes', plainTitle('# Heading'), 'Heading');
check('emphasis and code lose their marks', plainTitle('## Fix **the** `build` _now_'), 'Fix the build now');
check('a link keeps its text', plainTitle('see [the docs](https://example.com/x)'), 'see the docs');
check('lines join with spaces', plainTitle('first line\n\n- second'), 'first line - second');
check('a list item loses its bullet', plainTitle('- do this'), 'do this');
check('plain text stays', plainTitle('snake_case and 2 * 3'), 'snake_case and 2 * 3');
check('no title is empty', plainTitle(undefined), '');

const echoA = { provider: 'echo', displayName: 'Echo' };
const echoB = { provider: 'echo2', displayName: 'Echo' };
const other = { provider: 'claude', displayName: 'Claude Code' };
check('a unique name stands alone', agentLabel(other, [echoA, echoB, other]), 'Claude Code');
check('twins show their provider', [agentLabel(echoA, [echoA, echoB]), agentLabel(echoB, [echoA, echoB])], ['Echo (echo)', 'Echo (echo2)']);
check('no display name: the provider', agentLabel({ provider: 'x' }, [{ provider: 'x' }]), 'x');

const keyRes = { resource: 'https://ahpd.invalid/agents/g/key/gemini-api-key', resource_name: 'Gemini API key (GEMINI_API_KEY)', required: true };
const loginRes = { resource: 'https://ahpd.invalid/agents/c/login/claude%2Fai', required: false, bearer_methods_supported: [] };
check('no resources: ready', agentState({ description: 'ACP agent x 1' }), 'ready');
check('a required resource: needs sign-in', agentState({ description: 'Needs sign-in: no key.', protectedResources: [keyRes] }), 'needs sign-in');
check('an absent required counts as required', agentState({ description: '', protectedResources: [{ resource: 'r' }] }), 'needs sign-in');
check('none required: ready', agentState({ description: '', protectedResources: [loginRes] }), 'ready');
check('Failed: failed', agentState({ description: 'Failed: exec: not found. ACP agent', protectedResources: [keyRes] }), 'failed');
check('sign-in methods', signInMethods({ protectedResources: [keyRes, loginRes] }), [
  { resource: keyRes.resource, id: 'gemini-api-key', name: 'Gemini API key (GEMINI_API_KEY)', login: false, docs: '' },
  { resource: loginRes.resource, id: 'claude/ai', name: 'claude/ai', login: true, docs: '' },
]);

check('JSON input is indented', prettyInput('{"text":"hi"}'), '{\n  "text": "hi"\n}');
check('other input stays', prettyInput('ls -la'), 'ls -la');
check('an object input is shown as JSON', prettyInput({ a: 1 }), '{\n  "a": 1\n}');

const ago = (s) => new Date(Date.now() - s * 1000).toISOString();
check('seconds', elapsedText(ago(12)), '12 s');
check('minutes', elapsedText(ago(185)), '3 min 05 s');
check('hours', elapsedText(ago(3 * 3600 + 7 * 60)), '3 h 07 min');
check('no start', elapsedText(''), '');

const b64 = (t) => Buffer.from(t, 'utf-8').toString('base64');
check('a base64 data URI', refText({ uri: `data:text/plain;charset=utf-8;base64,${b64('héllo\nworld\n')}` }), 'héllo\nworld\n');
check('a percent-encoded data URI', refText({ uri: 'data:text/plain,a%20b' }), 'a b');
check('inline text', refText('as is'), 'as is');
check('a file URI needs fetching', refText({ uri: 'file:///tmp/x' }), null);
check('nothing', refText(undefined), null);

// MCP servers: top level and inside a plugin, with their state and choice.
const files = { type: 'mcpServer', id: 'mcp-files', uri: 'ahpd-mcp:files', name: 'files', _meta: { transport: 'stdio' }, state: { kind: 'ready' } };
const legacy = { type: 'mcpServer', id: 'mcp-legacy', uri: 'ahpd-mcp:legacy', name: 'legacy', _meta: { transport: 'sse' },
  state: { kind: 'error', error: { errorType: 'unsupportedTransport', message: 'the agent cannot take sse servers' } } };
const off = { type: 'mcpServer', id: 'mcp-off', uri: 'ahpd-mcp:off', name: 'off', enablement: [{ kind: 'global', enabled: false }], state: { kind: 'stopped' } };
const plugin = { type: 'plugin', id: 'p', uri: 'file:///p', name: 'p', children: [{ type: 'mcpServer', id: 'p-db', uri: 'file:///p', name: 'db', enabled: false, state: { kind: 'authRequired' } }, { type: 'skill', id: 's', name: 's' }] };
check('MCP servers are listed with their state', mcpServers([{ type: 'agent', id: 'a' }, files, legacy, off, plugin]), [
  { id: 'mcp-files', name: 'files', transport: 'stdio', enabled: true, state: 'ready', label: 'ready', error: '' },
  { id: 'mcp-legacy', name: 'legacy', transport: 'sse', enabled: true, state: 'error', label: 'error', error: 'the agent cannot take sse servers' },
  { id: 'mcp-off', name: 'off', transport: '', enabled: false, state: 'stopped', label: 'stopped', error: '' },
  { id: 'p-db', name: 'db', transport: '', enabled: false, state: 'authRequired', label: 'needs sign-in', error: '' },
]);
check('no customizations, no servers', mcpServers(undefined), []);
check('turning a server off decides for the session', mcpToggle(files, false, true),
  { type: 'session/customizationToggled', id: 'mcp-files', enablement: [{ kind: 'session', enabled: false }] });
check('turning it on puts the session decision before the others, replacing its own', mcpToggle({ ...off, enablement: [{ kind: 'session', enabled: false }, { kind: 'global', enabled: false }] }, true, true),
  { type: 'session/customizationToggled', id: 'mcp-off', enablement: [{ kind: 'session', enabled: true }, { kind: 'global', enabled: false }] });
check('a 0.x host takes enabled', mcpToggle(files, false, false), { type: 'session/customizationToggled', id: 'mcp-files', enabled: false });

let failed = 0;
for (const [name, ok, got, want] of cases) {
  if (!ok) { failed++; console.log(`FAIL ${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
}
console.log(`${cases.length - failed} passed, ${failed} failed`);
