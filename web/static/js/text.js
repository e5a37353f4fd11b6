// Text for the page: plain titles, labels and durations. No DOM here, so
// node can test it (text_test.mjs).

/**
 * plainTitle turns a title that may hold markdown (a first message such as
 * "# Fix **the** build") into plain text for the list, headers and the
 * page title.
 */
export function plainTitle(text) {
  if (!text) return '';
  return String(text)
    .split('\n').map((l) => l.trim()).filter(Boolean).join(' ')
    .replace(/^#{1,6}\s+/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[^\w*])[*_]([^*_\s][^*_]*?)[*_](?=[^\w*]|$)/g, '$1$2')
    .replace(/~~(.+?)~~/g, '$1')
    .replace(/`+([^`]+)`+/g, '$1')
    .replace(/^\s*(?:[-*+>]|\d+[.)])\s+/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** elapsedText says how long ago a turn started: "12 s", "3 min 05 s". */
export function elapsedText(iso) {
  const t = Date.parse(iso);
  if (!t) return '';
  const s = Math.max(0, Math.floor((Date.now() - t) / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/**
 * agentLabel names an agent in a list: its display name, and its provider
 * too when another agent shows the same name.
 */
export function agentLabel(a, all) {
  const name = a.displayName || a.provider;
  const twins = all.filter((b) => (b.displayName || b.provider) === name).length;
  return twins > 1 ? `${name} (${a.provider})` : name;
}

/**
 * agentState is an agent's state as ahpd's root entry tells it
 * (docs/agents.md): 'failed' when its description starts "Failed: ",
 * 'needs sign-in' when one of its protected resources is required (an
 * absent `required` means required), else 'ready'.
 */
export function agentState(a) {
  if ((a.description || '').startsWith('Failed: ')) return 'failed';
  if ((a.protectedResources || []).some((r) => r.required !== false)) return 'needs sign-in';
  return 'ready';
}

/**
 * signInMethods lists an agent's sign-in methods: a key sent with
 * authenticate (…/key/ID) or a login run in a terminal (…/login/ID).
 */
export function signInMethods(a) {
  return (a.protectedResources || []).map((r) => {
    const m = r.resource.match(/\/(key|login)\/([^/]+)$/);
    let id = m ? m[2] : r.resource;
    try { id = decodeURIComponent(id); } catch { /* as it is */ }
    return { resource: r.resource, id, name: r.resource_name || id, login: !!m && m[1] === 'login', docs: r.resource_documentation || '' };
  });
}

/** prettyInput shows a tool's input: JSON indented, other text as it is. */
export function prettyInput(input) {
  if (typeof input !== 'string') return JSON.stringify(input, null, 2);
  try {
    const v = JSON.parse(input);
    if (v && typeof v === 'object') return JSON.stringify(v, null, 2);
  } catch { /* not JSON */ }
  return input;
}

/**
 * refText returns the text a ContentRef carries inline (a data: URI, as
 * agents send small file contents), or the string itself; null when the
 * text must be fetched (a file URI).
 */
export function refText(ref) {
  if (typeof ref === 'string') return ref;
  if (!ref || typeof ref.uri !== 'string') return null;
  const m = ref.uri.match(/^data:([^,]*?)(;base64)?,([\s\S]*)$/);
  if (!m) return null;
  try {
    if (!m[2]) return decodeURIComponent(m[3]);
    const bin = atob(m[3]);
    return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}

const MCP_STATES = { starting: 'starting', ready: 'ready', authRequired: 'needs sign-in', error: 'error', stopped: 'stopped' };

/**
 * mcpServers lists a session's MCP servers: the top-level McpServer
 * customizations and those inside plugins and directories, each as
 * {id, name, transport, enabled, state, label, error}. enabled follows the
 * first enablement decision (1.x) or enabled (0.x), on when there is none;
 * state is the server's state kind and label how to show it.
 */
export function mcpServers(customizations) {
  const out = [];
  const visit = (list) => {
    for (const c of list || []) {
      if (c.type === 'mcpServer') {
        const kind = (c.state && c.state.kind) || 'starting';
        const decision = Array.isArray(c.enablement) && c.enablement.length ? c.enablement[0].enabled : c.enabled;
        const transport = c._meta && typeof c._meta.transport === 'string' ? c._meta.transport : '';
        const error = kind === 'error' ? ((c.state.error && c.state.error.message) || '') : '';
        out.push({ id: c.id, name: c.name || c.id, transport, enabled: decision !== false, state: kind, label: MCP_STATES[kind] || kind, error });
      }
      visit(c.children);
    }
  };
  visit(customizations);
  return out;
}

/**
 * mcpToggle is the action that turns an MCP server customization on or
 * off for the session: its session decision first (the most specific
 * scope), the other decisions kept, as session/customizationToggled
 * replaces them all. Versions before 0.9 take enabled instead.
 */
export function mcpToggle(c, on, modern) {
  if (!modern) return { type: 'session/customizationToggled', id: c.id, enabled: on };
  const rest = (Array.isArray(c.enablement) ? c.enablement : []).filter((e) => e.kind !== 'session');
  return { type: 'session/customizationToggled', id: c.id, enablement: [{ kind: 'session', enabled: on }, ...rest] };
}
