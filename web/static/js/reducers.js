// Pure reducers of the AHP channels, for the browser.
//
// Each reducer takes a channel state (plain JSON objects, as they arrive
// on the wire) and one action, and returns the next state. States are
// never modified: a new state shares every part the action did not
// change with the old one, and an action that does not apply returns the
// state itself. The only input besides state and action is the clock,
// which stamps modifiedAt; it is passed in so tests can freeze it.
//
// The same rules as the Go reducer package (../../reducer), checked in CI
// against the protocol's 249 reducer conformance fixtures. Actions of
// protocol 1.x that these states carry (chat/error with an error part,
// chat read and archived flags, chat/turnResume) are handled too.

export const Status = Object.freeze({
  Idle: 1,
  Error: 2,
  InProgress: 8,
  InputNeeded: 24,
  IsRead: 32,
  IsArchived: 64,
});

const ACTIVITY_BITS = 0x1f;
const INPUT_BIT = Status.InputNeeded & ~Status.InProgress;

const isoNow = () => new Date().toISOString();

/**
 * reduce applies action to the state of the given channel kind.
 *
 * opts.modern selects the rules of protocol 0.9.0 and later, where the
 * chat reducer takes modifiedAt from the actions' own data (a turn's start,
 * its start plus its duration at the end) instead of a clock, and an error
 * is a response part of its turn rather than Turn.error. Without it the
 * reducers follow 0.8.0, the version of the conformance fixtures.
 */
export function reduce(kind, state, action, now = isoNow, opts = {}) {
  if (state == null || action == null) return state;
  switch (kind) {
    case 'root': return root(state, action);
    case 'session': return session(state, action, opts.modern);
    case 'chat': return chat(state, action, opts.modern ? null : now);
    case 'terminal': return terminal(state, action, opts.modern);
    case 'changeset': return changeset(state, action);
    case 'annotations': return annotations(state, action);
    case 'automation': return automation(state, action);
    case 'automationRun': return automationRun(state, action);
    default: return state;
  }
}

// ---- helpers (never write to their inputs)

const with1 = (list, i, v) => { const out = list.slice(); out[i] = v; return out; };
const without = (list, i) => list.slice(0, i).concat(list.slice(i + 1));
const append = (list, v) => (list || []).concat([v]);
function upsert(list, v, same) {
  const i = (list || []).findIndex(same);
  return i >= 0 ? with1(list, i, v) : append(list, v);
}
function set(obj, key, value) {
  const out = { ...obj };
  if (value === undefined || value === null) delete out[key]; else out[key] = value;
  return out;
}
function mergeConfig(values, changes, replace) {
  return { ...(replace ? {} : values || {}), ...(changes || {}) };
}
const withActivity = (status, activity) => (status & ~ACTIVITY_BITS) | activity;
const withFlag = (status, flag, on) => on ? (status | flag) : (status & ~flag);

// ---- automations (1.1): the catalogue and one run

function automation(s, a) {
  switch (a.type) {
    case 'automation/set':
      return { ...s, entries: upsert(s.entries, a.automation, (e) => e.resource === a.automation.resource) };
    case 'automation/removed': {
      const i = (s.entries || []).findIndex((e) => e.resource === a.resource);
      return i < 0 ? s : { ...s, entries: without(s.entries, i) };
    }
  }
  // createRequested and updateRequested change nothing: the host answers
  // them with automation/set.
  return s;
}

function automationRun(s, a) {
  switch (a.type) {
    case 'automationRun/lifecycleChanged': return { ...s, lifecycle: a.lifecycle };
    case 'automationRun/sessionSet':
      return (s.sessions || []).includes(a.session) ? s : { ...s, sessions: append(s.sessions, a.session) };
    case 'automationRun/sessionRemoved': {
      const i = (s.sessions || []).indexOf(a.session);
      if (i < 0) return s;
      const n = { ...s, sessions: without(s.sessions, i) };
      return s.primarySession === a.session ? set(n, 'primarySession', undefined) : n;
    }
    case 'automationRun/primarySessionChanged': return set(s, 'primarySession', a.primarySession);
  }
  return s;
}

// ---- root

function root(s, a) {
  switch (a.type) {
    case 'root/agentsChanged': return { ...s, agents: a.agents };
    case 'root/activeSessionsChanged': return { ...s, activeSessions: a.activeSessions };
    case 'root/terminalsChanged': return set(s, 'terminals', a.terminals);
    case 'root/configChanged':
      if (!s.config) return s;
      return { ...s, config: { ...s.config, values: mergeConfig(s.config.values, a.config, a.replace === true) } };
  }
  return s;
}

// ---- session

function session(s, a, modern) {
  switch (a.type) {
    case 'session/ready': return { ...s, lifecycle: 'ready' };
    case 'session/creationFailed': return { ...s, lifecycle: modern ? 'failed' : 'creationFailed', creationError: a.error };
    case 'session/chatAdded':
      return { ...s, chats: upsert(s.chats, a.summary, (c) => c.resource === a.summary.resource) };
    case 'session/chatRemoved': {
      const i = (s.chats || []).findIndex((c) => c.resource === a.chat);
      if (i < 0) return s;
      let n = { ...s, chats: without(s.chats, i) };
      if (s.defaultChat === a.chat) n = set(n, 'defaultChat', undefined);
      return n;
    }
    case 'session/chatUpdated': {
      const i = (s.chats || []).findIndex((c) => c.resource === a.chat);
      if (i < 0) return s;
      const c = { ...s.chats[i] };
      for (const [k, v] of Object.entries(a.changes || {})) {
        if (k === 'resource') continue;
        if (v === null) delete c[k]; else c[k] = v;
      }
      return { ...s, chats: with1(s.chats, i, c) };
    }
    case 'session/chatsReordered': {
      // The order must name every chat exactly once; others are ignored.
      const order = a.chats || [];
      const chats = s.chats || [];
      if (order.length !== chats.length) return s;
      const byURI = new Map(chats.map((c) => [c.resource, c]));
      const out = [];
      for (const r of order) {
        if (!byURI.has(r)) return s;
        out.push(byURI.get(r));
        byURI.delete(r);
      }
      return { ...s, chats: out };
    }
    case 'session/workingDirectoryReplaced': {
      const dirs = s.workingDirectories || [];
      const i = dirs.indexOf(a.directory);
      if (i < 0) return s;
      const j = dirs.indexOf(a.replacement);
      let out;
      if (j < 0 || j === i) out = with1(dirs, i, a.replacement);
      else if (j > i) out = dirs.slice(0, i).concat([a.replacement], dirs.slice(i + 1, j), dirs.slice(j + 1));
      else out = without(dirs, i);
      return { ...s, workingDirectories: out };
    }
    case 'session/defaultChatChanged': return set(s, 'defaultChat', a.defaultChat);
    case 'session/titleChanged': return { ...s, title: a.title };
    case 'session/activityChanged': return set(s, 'activity', a.activity);
    case 'session/isReadChanged': return { ...s, status: withFlag(s.status, Status.IsRead, a.isRead) };
    case 'session/isArchivedChanged': return { ...s, status: withFlag(s.status, Status.IsArchived, a.isArchived) };
    case 'session/metaChanged': return set(s, '_meta', a._meta);
    case 'session/changesetsChanged': return set(s, 'changesets', a.changesets);
    case 'session/configChanged':
      if (!s.config) return s;
      return { ...s, config: { ...s.config, values: mergeConfig(s.config.values, a.config, a.replace === true) } };
    case 'session/serverToolsChanged': return set(s, 'serverTools', a.tools);
    case 'session/activeClientSet':
      return { ...s, activeClients: upsert(s.activeClients, a.activeClient, (c) => c.clientId === a.activeClient.clientId) };
    case 'session/activeClientRemoved': {
      const i = (s.activeClients || []).findIndex((c) => c.clientId === a.clientId);
      return i < 0 ? s : { ...s, activeClients: without(s.activeClients, i) };
    }
    case 'session/workingDirectorySet':
      if ((s.workingDirectories || []).includes(a.directory)) return s;
      return { ...s, workingDirectories: append(s.workingDirectories, a.directory) };
    case 'session/workingDirectoryRemoved': {
      const i = (s.workingDirectories || []).indexOf(a.directory);
      return i < 0 ? s : { ...s, workingDirectories: without(s.workingDirectories, i) };
    }
    case 'session/inputNeededSet': {
      if (!a.request) return s;
      const list = upsert(s.inputNeeded, a.request, (r) => r.id === a.request.id);
      return { ...s, inputNeeded: list, status: inputNeededStatus(s.status, list) };
    }
    case 'session/inputNeededRemoved': {
      const i = (s.inputNeeded || []).findIndex((r) => r.id === a.id);
      if (i < 0) return s;
      let list = without(s.inputNeeded, i);
      const n = { ...s, status: inputNeededStatus(s.status, list) };
      if (list.length === 0) delete n.inputNeeded; else n.inputNeeded = list;
      return n;
    }
    case 'session/customizationsChanged': return set(s, 'customizations', a.customizations);
    case 'session/customizationUpdated': {
      if (!a.customization) return s;
      return { ...s, customizations: upsert(s.customizations, a.customization, (c) => c.id === a.customization.id) };
    }
    case 'session/customizationRemoved': return customizationRemoved(s, a.id);
    case 'session/customizationToggled': return customizationToggled(s, a);
    case 'session/mcpServerStateChanged':
      if (!a.state) return s;
      return updateMcpServer(s, a.id, a.state, a.channel);
    case 'session/mcpServerStartRequested': return updateMcpServer(s, a.id, { kind: 'starting' });
    case 'session/mcpServerStopRequested': return updateMcpServer(s, a.id, { kind: 'stopped' });
  }
  return s;
}

function inputNeededStatus(status, list) {
  if ((list || []).some((r) => r.kind !== 'toolClientExecution')) {
    return (status & ~ACTIVITY_BITS) | Status.InputNeeded;
  }
  return status & ~INPUT_BIT;
}

const CONTAINERS = new Set(['plugin', 'directory']);
const TOP_KINDS = new Set(['plugin', 'directory', 'mcpServer']);
const CHILD_KINDS = new Set(['agent', 'skill', 'prompt', 'rule', 'hook', 'mcpServer']);
const children = (c) => (CONTAINERS.has(c.type) ? c.children || [] : []);

function findChild(list, id) {
  for (let i = 0; i < (list || []).length; i++) {
    const j = children(list[i]).findIndex((c) => c.id === id);
    if (j >= 0) return [i, j];
  }
  return [-1, -1];
}

function customizationRemoved(s, id) {
  const i = (s.customizations || []).findIndex((c) => c.id === id);
  if (i >= 0) return { ...s, customizations: without(s.customizations, i) };
  const [ci, j] = findChild(s.customizations, id);
  if (ci < 0) return s;
  const container = { ...s.customizations[ci], children: without(children(s.customizations[ci]), j) };
  return { ...s, customizations: with1(s.customizations, ci, container) };
}

function toggleFields(a) {
  // 1.x sends enablement; 0.8 sends enabled.
  return a.enablement !== undefined ? { enablement: a.enablement } : { enabled: a.enabled };
}

function customizationToggled(s, a) {
  const i = (s.customizations || []).findIndex((c) => c.id === a.id);
  if (i >= 0) {
    if (!TOP_KINDS.has(s.customizations[i].type)) return s;
    return { ...s, customizations: with1(s.customizations, i, { ...s.customizations[i], ...toggleFields(a) }) };
  }
  const [ci, j] = findChild(s.customizations, a.id);
  if (ci < 0) return s;
  const kids = children(s.customizations[ci]);
  if (!CHILD_KINDS.has(kids[j].type)) return s;
  const container = { ...s.customizations[ci], children: with1(kids, j, { ...kids[j], ...toggleFields(a) }) };
  return { ...s, customizations: with1(s.customizations, ci, container) };
}

function updateMcpServer(s, id, state, channel) {
  const update = (m) => set({ ...m, state }, 'channel', channel);
  const i = (s.customizations || []).findIndex((c) => c.id === id);
  if (i >= 0) {
    if (s.customizations[i].type !== 'mcpServer') return s;
    return { ...s, customizations: with1(s.customizations, i, update(s.customizations[i])) };
  }
  const [ci, j] = findChild(s.customizations, id);
  if (ci < 0) return s;
  const kids = children(s.customizations[ci]);
  if (kids[j].type !== 'mcpServer') return s;
  const container = { ...s.customizations[ci], children: with1(kids, j, update(kids[j])) };
  return { ...s, customizations: with1(s.customizations, ci, container) };
}

// ---- chat

function chatActivity(s) {
  if (!s.activeTurn) return Status.Idle;
  return s.activeTurn.responseParts.some(partBlocks) ? Status.InputNeeded : Status.InProgress;
}

function partBlocks(p) {
  if (p.kind === 'inputRequest') return p.response == null;
  if (p.kind === 'toolCall') {
    const st = p.toolCall && p.toolCall.status;
    return st === 'pending-confirmation' || st === 'pending-result-confirmation' || st === 'auth-required';
  }
  return false;
}

const activeTurn = (s, id) => (s.activeTurn && s.activeTurn.id === id ? s.activeTurn : null);

function partID(p) {
  if (p.kind === 'markdown' || p.kind === 'reasoning') return p.id;
  if (p.kind === 'toolCall' && p.toolCall && TOOL_STATES.has(p.toolCall.status)) return p.toolCall.toolCallId;
  return undefined;
}

function chat(s, a, now) {
  switch (a.type) {
    case 'chat/changesetsChanged': return set(s, 'changesets', a.changesets);
    case 'chat/turnStarted': {
      const n = {
        ...s,
        activeTurn: { id: a.turnId, startedAt: a.startedAt, message: a.message, responseParts: [] },
      };
      n.status = withActivity(s.status, chatActivity(n)) & ~Status.IsRead;
      if (now) n.modifiedAt = now();
      else if (a.startedAt) n.modifiedAt = a.startedAt;
      const q = a.queuedMessageId;
      if (q != null) {
        if (n.steeringMessage && n.steeringMessage.id === q) delete n.steeringMessage;
        const queue = withoutQueued(n.queuedMessages, q);
        if (queue === undefined) delete n.queuedMessages; else n.queuedMessages = queue;
      }
      return n;
    }
    case 'chat/delta': return appendText(s, a, 'markdown');
    case 'chat/reasoning': return appendText(s, a, 'reasoning');
    case 'chat/responsePart': {
      const t = activeTurn(s, a.turnId);
      if (!t) return s;
      return { ...s, activeTurn: { ...t, responseParts: append(t.responseParts, a.part) } };
    }
    case 'chat/usage': {
      const t = activeTurn(s, a.turnId);
      if (!t) return s;
      return { ...s, activeTurn: { ...t, usage: a.usage } };
    }
    case 'chat/turnComplete': return endTurn(s, a, 'complete', now);
    case 'chat/turnCancelled': return endTurn(s, a, 'cancelled', now);
    case 'chat/error': return endTurn(s, a, 'error', now);
    case 'chat/turnResume': return turnResume(s, a, now);
    case 'chat/truncated': {
      const n = { ...s };
      if (a.turnId == null) {
        n.turns = [];
        delete n.turnsNextCursor;
      } else {
        const i = s.turns.findIndex((t) => t.id === a.turnId);
        if (i < 0) return s;
        n.turns = s.turns.slice(0, i + 1);
      }
      delete n.activeTurn;
      if (now) n.modifiedAt = now();
      n.status = withActivity(s.status, chatActivity(n));
      return n;
    }
    case 'chat/turnsLoaded': {
      const loaded = new Set(s.turns.map((t) => t.id));
      const older = (a.turns || []).filter((t) => !loaded.has(t.id));
      return set({ ...s, turns: older.concat(s.turns) }, 'turnsNextCursor', a.turnsNextCursor);
    }
    case 'chat/toolCallStart': {
      const t = activeTurn(s, a.turnId);
      if (!t) return s;
      const tc = { toolCallId: a.toolCallId, toolName: a.toolName, displayName: a.displayName, status: 'streaming' };
      copyDefined(tc, a, ['intention', 'contributor', '_meta']);
      return { ...s, activeTurn: { ...t, responseParts: append(t.responseParts, { kind: 'toolCall', toolCall: tc }) } };
    }
    case 'chat/toolCallDelta': return updateToolCall(s, a, toolCallDelta);
    case 'chat/toolCallReady': return updateToolCall(s, a, toolCallReady);
    case 'chat/toolCallConfirmed': return updateToolCall(s, a, toolCallConfirmed);
    case 'chat/toolCallComplete': return updateToolCall(s, a, toolCallComplete);
    case 'chat/toolCallResultConfirmed': return updateToolCall(s, a, toolCallResultConfirmed);
    case 'chat/toolCallContentChanged': return updateToolCall(s, a, toolCallContentChanged);
    case 'chat/toolCallAuthRequired': return updateToolCall(s, a, toolCallAuthRequired);
    case 'chat/toolCallAuthResolved': return updateToolCall(s, a, toolCallAuthResolved);
    case 'chat/inputRequested': return inputRequested(s, a, now);
    case 'chat/inputAnswerChanged': return inputAnswerChanged(s, a, now);
    case 'chat/inputCompleted': return inputCompleted(s, a, now);
    case 'chat/pendingMessageSet': return pendingMessageSet(s, a);
    case 'chat/pendingMessageRemoved': return pendingMessageRemoved(s, a);
    case 'chat/queuedMessagesReordered': return queuedMessagesReordered(s, a);
    case 'chat/activityChanged': return set(s, 'activity', a.activity);
    case 'chat/draftChanged': return set(s, 'draft', a.draft);
    case 'chat/isReadChanged': return { ...s, status: withFlag(s.status, Status.IsRead, a.isRead) };
    case 'chat/isArchivedChanged': return { ...s, status: withFlag(s.status, Status.IsArchived, a.isArchived) };
    case 'chat/movableChanged': return { ...s, movable: a.movable };
    case 'chat/workingDirectorySet':
      if ((s.workingDirectories || []).includes(a.directory)) return s;
      return { ...s, workingDirectories: append(s.workingDirectories, a.directory) };
    case 'chat/workingDirectoryRemoved': {
      const i = (s.workingDirectories || []).indexOf(a.directory);
      return i < 0 ? s : { ...s, workingDirectories: without(s.workingDirectories, i) };
    }
  }
  return s;
}

function copyDefined(dst, src, keys) {
  for (const k of keys) if (src[k] !== undefined && src[k] !== null) dst[k] = src[k];
  return dst;
}

// appendText streams text into a markdown or reasoning part of the active
// turn. Only the turn and its list of parts are copied: JavaScript
// strings concatenate without copying the prefix, so a long reply streams
// in time proportional to the deltas.
function appendText(s, a, kind) {
  const t = activeTurn(s, a.turnId);
  if (!t) return s;
  const i = t.responseParts.findIndex((p) => partID(p) === a.partId);
  if (i < 0 || t.responseParts[i].kind !== kind) return s;
  const p = t.responseParts[i];
  const parts = with1(t.responseParts, i, { kind, id: p.id, content: (p.content || '') + a.content });
  return { ...s, activeTurn: { ...t, responseParts: parts } };
}

function endTurn(s, a, state, now) {
  const t = activeTurn(s, a.turnId);
  if (!t) return s;
  const duration = a.duration >= 0 ? a.duration : 0;
  let parts = skipUnfinished(t.responseParts);
  const turn = { id: t.id, startedAt: t.startedAt, duration, message: t.message, responseParts: parts, state };
  if (t.usage != null) turn.usage = t.usage;
  if (state === 'error') {
    if (a.part) turn.responseParts = append(parts, a.part); // 1.x: an error part
    else if (!now && a.error) turn.responseParts = append(parts, { kind: 'error', error: a.error });
    else if (a.error) turn.error = a.error; // 0.8: Turn.error
  }
  const n = { ...s, turns: append(s.turns, turn), modifiedAt: now ? now() : endedAt(s.modifiedAt, t.startedAt, duration) };
  delete n.activeTurn;
  n.status = withActivity(s.status, state === 'error' ? Status.Error : chatActivity(n));
  return n;
}

// endedAt is when a turn ended by its own data: its start plus the
// producer's duration; modifiedAt as it was when the start does not parse.
function endedAt(modifiedAt, startedAt, duration) {
  const t = Date.parse(startedAt);
  return Number.isNaN(t) ? modifiedAt : new Date(t + duration).toISOString();
}

// turnResume reopens the latest turn when it ended in a resumable error,
// with its message, parts and usage as they were (protocol 1.x).
function turnResume(s, a, now) {
  if (s.activeTurn || !s.turns.length) return s;
  const last = s.turns[s.turns.length - 1];
  if (last.id !== a.turnId || last.state !== 'error') return s;
  const tail = last.responseParts[last.responseParts.length - 1];
  if (!tail || tail.kind !== 'error' || tail.resumable !== true) return s;
  const t = { id: last.id, startedAt: last.startedAt, message: last.message, responseParts: last.responseParts };
  if (last.usage != null) t.usage = last.usage;
  const n = { ...s, turns: s.turns.slice(0, -1), activeTurn: t };
  n.status = withActivity(s.status, chatActivity(n));
  return n;
}

function skipUnfinished(parts) {
  let out = null;
  parts.forEach((p, i) => {
    if (p.kind !== 'toolCall') return;
    const sk = toolCallSkipped(p.toolCall);
    if (!sk) return;
    if (!out) out = parts.slice();
    out[i] = { kind: 'toolCall', toolCall: sk };
  });
  return out || parts;
}

function withoutQueued(queue, id) {
  if (!queue || !queue.some((m) => m.id === id)) return queue;
  const out = queue.filter((m) => m.id !== id);
  return out.length ? out : undefined;
}

// ---- tool calls (the state machine of state-model.md)

const TOOL_STATES = new Set(['streaming', 'pending-confirmation', 'running', 'auth-required',
  'pending-result-confirmation', 'completed', 'cancelled']);

function base(tc, status) {
  const b = { toolCallId: tc.toolCallId, toolName: tc.toolName, displayName: tc.displayName };
  copyDefined(b, tc, ['intention', 'contributor', '_meta']);
  b.status = status;
  return b;
}

// params returns the invocation message and tool input of a tool call.
function params(tc) {
  if (tc.status === 'streaming') return [tc.invocationMessage != null ? tc.invocationMessage : '', undefined];
  return [tc.invocationMessage, tc.toolInput];
}

const metaOr = (next, cur) => (next != null ? next : cur);

function updateToolCall(s, a, next) {
  const t = activeTurn(s, a.turnId);
  if (!t) return s;
  let parts = null;
  t.responseParts.forEach((p, i) => {
    if (p.kind !== 'toolCall' || !p.toolCall || !TOOL_STATES.has(p.toolCall.status)) return;
    if (p.toolCall.toolCallId !== a.toolCallId) return;
    const tc = next(p.toolCall, a);
    if (!tc) return;
    if (!parts) parts = t.responseParts.slice();
    parts[i] = { kind: 'toolCall', toolCall: tc };
  });
  if (!parts) return s;
  const n = { ...s, activeTurn: { ...t, responseParts: parts } };
  n.status = withActivity(s.status, chatActivity(n));
  return n;
}

function withMeta(b, meta) { return set(b, '_meta', meta); }

function toolCallDelta(tc, a) {
  if (tc.status !== 'streaming') return null;
  const n = withMeta({ ...tc }, metaOr(a._meta, tc._meta));
  if (a.content != null) n.partialInput = (tc.partialInput || '') + a.content;
  if (a.invocationMessage != null) n.invocationMessage = a.invocationMessage;
  return n;
}

function refineContributor(cur, next) {
  if (next == null) return cur;
  const curClient = cur && cur.kind === 'client';
  const nextClient = next.kind === 'client';
  if (curClient && nextClient && cur.clientId === next.clientId) return next;
  if (curClient || nextClient) return cur;
  return next;
}

function toolCallReady(tc, a) {
  let input; let prev = null;
  switch (tc.status) {
    case 'streaming': break;
    case 'running': input = tc.toolInput; break;
    case 'pending-confirmation': input = tc.toolInput; prev = tc; break;
    default: return null;
  }
  const b0 = { ...tc };
  const meta = metaOr(a._meta, tc._meta);
  const contributor = refineContributor(tc.contributor, a.contributor);
  const intention = a.intention != null ? a.intention : tc.intention;
  if (a.toolInput != null) input = a.toolInput;
  const mk = (status) => {
    const b = base({ ...b0, _meta: meta, contributor, intention }, status);
    return b;
  };
  if (a.confirmed != null) {
    const n = mk('running');
    copyDefined(n, { invocationMessage: a.invocationMessage, toolInput: input, confirmed: a.confirmed },
      ['invocationMessage', 'toolInput', 'confirmed']);
    return n;
  }
  const n = mk('pending-confirmation');
  copyDefined(n, {
    invocationMessage: a.invocationMessage, toolInput: input, confirmationTitle: a.confirmationTitle,
    riskAssessment: a.riskAssessment, edits: a.edits, editable: a.editable, options: a.options,
  }, ['invocationMessage', 'toolInput', 'confirmationTitle', 'riskAssessment', 'edits', 'editable', 'options']);
  if (prev) {
    for (const k of ['confirmationTitle', 'riskAssessment', 'edits', 'options']) {
      if (n[k] == null && prev[k] != null) n[k] = prev[k];
    }
    if (!n.editable && prev.editable != null) n.editable = prev.editable;
  }
  return n;
}

function selectedOption(options, id) {
  if (id == null) return undefined;
  return (options || []).find((o) => o.id === id);
}

function toolCallConfirmed(tc, a) {
  if (tc.status !== 'pending-confirmation') return null;
  const meta = metaOr(a._meta, tc._meta);
  const option = selectedOption(tc.options, a.selectedOptionId);
  if (a.approved) {
    const n = base({ ...tc, _meta: meta }, 'running');
    let input = tc.toolInput;
    if (a.editedToolInput != null && !(input != null && typeof input === 'object')) input = a.editedToolInput;
    copyDefined(n, { invocationMessage: tc.invocationMessage, toolInput: input,
      confirmed: a.confirmed != null ? a.confirmed : 'user-action', selectedOption: option },
    ['invocationMessage', 'toolInput', 'confirmed', 'selectedOption']);
    return n;
  }
  const n = base({ ...tc, _meta: meta }, 'cancelled');
  copyDefined(n, { invocationMessage: tc.invocationMessage, toolInput: tc.toolInput,
    reason: a.reason != null ? a.reason : 'denied', reasonMessage: a.reasonMessage,
    userSuggestion: a.userSuggestion, selectedOption: option },
  ['invocationMessage', 'toolInput', 'reason', 'reasonMessage', 'userSuggestion', 'selectedOption']);
  return n;
}

function toolCallComplete(tc, a) {
  let confirmed = 'not-needed'; let option; let content; let fromAuth = false;
  switch (tc.status) {
    case 'pending-confirmation': break;
    case 'running': confirmed = tc.confirmed; option = tc.selectedOption; break;
    case 'auth-required':
      if (a.result.success) return null;
      confirmed = tc.confirmed; option = tc.selectedOption; content = tc.content; fromAuth = true;
      break;
    default: return null;
  }
  const [invocation, input] = params(tc);
  const res = a.result || {};
  if (res.content != null) content = res.content;
  const status = a.requiresResultConfirmation === true && !fromAuth ? 'pending-result-confirmation' : 'completed';
  const n = base({ ...tc, _meta: metaOr(a._meta, tc._meta) }, status);
  copyDefined(n, { invocationMessage: invocation, toolInput: input, confirmed, selectedOption: option,
    success: res.success, pastTenseMessage: res.pastTenseMessage, content,
    structuredContent: res.structuredContent, error: res.error },
  ['invocationMessage', 'toolInput', 'confirmed', 'selectedOption', 'success', 'pastTenseMessage',
    'content', 'structuredContent', 'error']);
  return n;
}

function toolCallResultConfirmed(tc, a) {
  if (tc.status !== 'pending-result-confirmation') return null;
  const meta = metaOr(a._meta, tc._meta);
  if (a.approved) {
    const n = base({ ...tc, _meta: meta }, 'completed');
    copyDefined(n, tc, ['invocationMessage', 'toolInput', 'confirmed', 'selectedOption', 'success',
      'pastTenseMessage', 'content', 'structuredContent', 'error']);
    return n;
  }
  const n = base({ ...tc, _meta: meta }, 'cancelled');
  copyDefined(n, tc, ['invocationMessage', 'toolInput']);
  n.reason = 'result-denied';
  copyDefined(n, tc, ['selectedOption']);
  return n;
}

function toolCallContentChanged(tc, a) {
  if (tc.status !== 'running') return null;
  return set(withMeta({ ...tc }, metaOr(a._meta, tc._meta)), 'content', a.content);
}

function toolCallAuthRequired(tc, a) {
  if (tc.status !== 'running' || !tc.contributor || tc.contributor.kind !== 'mcp') return null;
  const n = base({ ...tc, _meta: metaOr(a._meta, tc._meta) }, 'auth-required');
  copyDefined(n, { invocationMessage: tc.invocationMessage, toolInput: tc.toolInput, confirmed: tc.confirmed,
    selectedOption: tc.selectedOption, content: tc.content, auth: a.auth },
  ['invocationMessage', 'toolInput', 'confirmed', 'selectedOption', 'content', 'auth']);
  return n;
}

function toolCallAuthResolved(tc, a) {
  if (tc.status !== 'auth-required') return null;
  const n = base({ ...tc, _meta: metaOr(a._meta, tc._meta) }, 'running');
  copyDefined(n, tc, ['invocationMessage', 'toolInput', 'confirmed', 'selectedOption', 'content']);
  return n;
}

function toolCallSkipped(tc) {
  if (!tc || !TOOL_STATES.has(tc.status) || tc.status === 'completed' || tc.status === 'cancelled') return null;
  const [invocation, input] = params(tc);
  const n = base(tc, 'cancelled');
  copyDefined(n, { invocationMessage: invocation, toolInput: input }, ['invocationMessage', 'toolInput']);
  n.reason = 'skipped';
  return n;
}

// ---- input requests

function openInputRequest(t, id) {
  const i = t.responseParts.findIndex((p) => p.kind === 'inputRequest' && p.response == null && p.request.id === id);
  return [i, i >= 0 ? t.responseParts[i] : null];
}

const nonEmpty = (m) => (m && Object.keys(m).length ? m : undefined);

function inputRequested(s, a, now) {
  const t = s.activeTurn;
  if (!t) return s;
  let request = a.request;
  const [i, open] = openInputRequest(t, request.id);
  let parts;
  if (open) {
    if (request.answers == null && open.request.answers != null) request = { ...request, answers: open.request.answers };
    parts = with1(t.responseParts, i, { kind: 'inputRequest', request });
  } else {
    parts = append(t.responseParts, { kind: 'inputRequest', request });
  }
  const n = { ...s, activeTurn: { ...t, responseParts: parts } };
  n.status = withActivity(s.status, chatActivity(n)) & ~Status.IsRead;
  if (now) n.modifiedAt = now();
  return n;
}

function inputAnswerChanged(s, a, now) {
  const t = s.activeTurn;
  if (!t) return s;
  const [i, open] = openInputRequest(t, a.requestId);
  if (!open) return s;
  const answers = { ...(open.request.answers || {}) };
  if (a.answer == null) delete answers[a.questionId]; else answers[a.questionId] = a.answer;
  const part = { ...open, request: set(open.request, 'answers', nonEmpty(answers)) };
  const n = { ...s, activeTurn: { ...t, responseParts: with1(t.responseParts, i, part) } };
  if (now) n.modifiedAt = now();
  return n;
}

function inputCompleted(s, a, now) {
  const t = s.activeTurn;
  if (!t) return s;
  const [i, open] = openInputRequest(t, a.requestId);
  if (!open) return s;
  let answers = open.request.answers;
  if (a.answers && Object.keys(a.answers).length) answers = { ...(answers || {}), ...a.answers };
  const part = { ...open, request: set(open.request, 'answers', nonEmpty(answers)), response: a.response };
  const n = { ...s, activeTurn: { ...t, responseParts: with1(t.responseParts, i, part) } };
  n.status = withActivity(s.status, chatActivity(n));
  if (now) n.modifiedAt = now();
  return n;
}

// ---- pending messages

function pendingMessageSet(s, a) {
  const msg = { id: a.id, message: a.message };
  if (a.kind === 'steering') return { ...s, steeringMessage: msg };
  if (a.kind === 'queued') return { ...s, queuedMessages: upsert(s.queuedMessages, msg, (m) => m.id === a.id) };
  return s;
}

function pendingMessageRemoved(s, a) {
  if (a.kind === 'steering') {
    if (!s.steeringMessage || s.steeringMessage.id !== a.id) return s;
    return set(s, 'steeringMessage', undefined);
  }
  if (a.kind === 'queued') {
    const q = withoutQueued(s.queuedMessages, a.id);
    if (q === s.queuedMessages) return s;
    return set(s, 'queuedMessages', q);
  }
  return s;
}

function queuedMessagesReordered(s, a) {
  if (!s.queuedMessages) return s;
  const index = new Map();
  s.queuedMessages.forEach((m, i) => { if (!index.has(m.id)) index.set(m.id, i); });
  const placed = new Array(s.queuedMessages.length).fill(false);
  const out = [];
  for (const id of a.order || []) {
    const i = index.get(id);
    if (i !== undefined && !placed[i]) { placed[i] = true; out.push(s.queuedMessages[i]); }
  }
  s.queuedMessages.forEach((m, i) => { if (!placed[i]) out.push(m); });
  return { ...s, queuedMessages: out };
}

// ---- terminal

function terminal(s, a, modern) {
  switch (a.type) {
    case 'terminal/data': {
      const content = s.content || [];
      const tail = content[content.length - 1];
      let grown = null;
      if (tail && tail.type === 'unclassified') grown = { ...tail, value: tail.value + a.data };
      else if (tail && tail.type === 'command' && !tail.isComplete) grown = { ...tail, output: (tail.output || '') + a.data };
      if (grown) return { ...s, content: with1(content, content.length - 1, grown) };
      return { ...s, content: append(content, { type: 'unclassified', value: a.data }) };
    }
    case 'terminal/input': return s;
    case 'terminal/resized': return { ...s, cols: a.cols, rows: a.rows };
    case 'terminal/claimed': return { ...s, claim: a.claim };
    case 'terminal/titleChanged': return { ...s, title: a.title };
    case 'terminal/cwdChanged': return { ...s, cwd: a.cwd };
    case 'terminal/exited':
      // 1.x: the lifecycle becomes exited, with the exit code when there is one.
      if (modern) {
        const n = { ...s, lifecycle: a.exitCode == null ? { status: 'exited' } : { status: 'exited', exitCode: a.exitCode } };
        delete n.exitCode;
        return n;
      }
      return a.lifecycle !== undefined ? { ...s, lifecycle: a.lifecycle } : set(s, 'exitCode', a.exitCode);
    case 'terminal/cleared': return { ...s, content: [] };
    case 'terminal/commandDetectionAvailable': return { ...s, supportsCommandDetection: true };
    case 'terminal/commandExecuted': {
      const part = { type: 'command', commandId: a.commandId, commandLine: a.commandLine, output: '', isComplete: false };
      copyDefined(part, a, ['timestamp']);
      return { ...s, content: append(s.content, part), supportsCommandDetection: true };
    }
    case 'terminal/commandFinished': {
      let content = null;
      (s.content || []).forEach((p, i) => {
        if (p.type !== 'command' || p.commandId !== a.commandId) return;
        if (!content) content = s.content.slice();
        const done = { ...p, isComplete: true };
        delete done.exitCode; delete done.durationMs;
        copyDefined(done, a, ['exitCode', 'durationMs']);
        content[i] = done;
      });
      return content ? { ...s, content } : s;
    }
  }
  return s;
}

// ---- changeset

function changeset(s, a) {
  switch (a.type) {
    case 'changeset/statusChanged': {
      const n = { ...s, status: a.status };
      delete n.error;
      if (a.status === 'error' && a.error != null) n.error = a.error;
      return n;
    }
    case 'changeset/fileSet':
      return { ...s, files: upsert(s.files, a.file, (f) => f.id === a.file.id) };
    case 'changeset/fileRemoved': {
      const i = (s.files || []).findIndex((f) => f.id === a.fileId);
      return i < 0 ? s : { ...s, files: without(s.files, i) };
    }
    case 'changeset/filesReviewChanged': {
      const ids = new Set(a.files || []);
      let files = null;
      (s.files || []).forEach((f, i) => {
        if (!ids.has(f.id)) return;
        if (!files) files = s.files.slice();
        files[i] = { ...f, reviewed: a.reviewed };
      });
      return files ? { ...s, files } : s;
    }
    case 'changeset/contentChanged': {
      const n = { ...s, files: a.files || [] };
      if (a.operations != null) n.operations = a.operations;
      return set(n, 'error', a.error);
    }
    case 'changeset/operationsChanged': return set(s, 'operations', a.operations);
    case 'changeset/operationStatusChanged': {
      const i = (s.operations || []).findIndex((op) => op.id === a.operationId);
      if (i < 0) return s;
      const op = { ...s.operations[i], status: a.status };
      delete op.error;
      if (a.status === 'error' && a.error != null) op.error = a.error;
      return { ...s, operations: with1(s.operations, i, op) };
    }
    case 'changeset/cleared':
      return (s.files || []).length === 0 ? s : { ...s, files: [] };
  }
  return s;
}

// ---- annotations

function annotations(s, a) {
  const list = s.annotations || [];
  const find = (id) => list.findIndex((x) => x.id === id);
  switch (a.type) {
    case 'annotations/set':
      return { ...s, annotations: upsert(list, a.annotation, (x) => x.id === a.annotation.id) };
    case 'annotations/updated': {
      const i = find(a.annotationId);
      if (i < 0) return s;
      const an = { ...list[i] };
      copyDefined(an, a, ['turnId', 'origin', 'resource', 'range', 'resolved']);
      return { ...s, annotations: with1(list, i, an) };
    }
    case 'annotations/removed': {
      const i = find(a.annotationId);
      return i < 0 ? s : { ...s, annotations: without(list, i) };
    }
    case 'annotations/entrySet': {
      const i = find(a.annotationId);
      if (i < 0) return s;
      const an = { ...list[i], entries: upsert(list[i].entries, a.entry, (e) => e.id === a.entry.id) };
      return { ...s, annotations: with1(list, i, an) };
    }
    case 'annotations/entryRemoved': {
      const i = find(a.annotationId);
      if (i < 0) return s;
      const j = (list[i].entries || []).findIndex((e) => e.id === a.entryId);
      if (j < 0) return s;
      return { ...s, annotations: with1(list, i, { ...list[i], entries: without(list[i].entries, j) }) };
    }
  }
  return s;
}

// ---- summary roll-up (session status from its chats), as the host does

/** isoLater compares two ISO-8601 timestamps as strings (same format). */
export const isoLater = (a, b) => (a || '') > (b || '');
