// The automations view: the host's automation catalogue
// (ahp-automations://) with each automation's schedule, next run and
// recent runs; buttons to run one now (runAutomation), switch its
// schedule on or off (automation/updateRequested) and remove it
// (automation/removed); and a form that creates one
// (automation/createRequested). Shown at #/automations when the host
// advertises automations in initialize.

import { h, $ } from './dom.js';

const CATALOGUE = 'ahp-automations://';

/** scheduleText says when a definition runs. */
export function scheduleText(def) {
  const s = (def.triggers || []).filter((t) => t.kind === 'schedule').map((t) => `${t.schedule.expression} (${t.schedule.timeZone})`);
  return s.length ? s.join('; ') : 'run by hand';
}

/** runStatus says how a run stands, with the reason of a failure. */
export function runStatus(lifecycle) {
  if (lifecycle.status === 'failed' && lifecycle.error) return `failed: ${lifecycle.error.message}`;
  return lifecycle.status;
}

const originText = (o) => (o.kind === 'manual' ? 'by hand' : o.catchUp ? 'catch-up' : 'scheduled');

const when = (iso) => {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
};

export class AutomationsView {
  constructor(app) {
    this.app = app;
    this.client = app.client;
    this.unwatch = null;
    this.creating = null; // resource of the automation being created
    $('#automations-btn').addEventListener('click', () => { location.hash = '#/automations'; });
    $('#a-new').addEventListener('click', () => this.openForm());
    $('#a-cancel').addEventListener('click', () => { $('#a-form').hidden = true; });
    $('#a-form').addEventListener('submit', (e) => { e.preventDefault(); this.create(); });
    this.client.addEventListener('rejected', (e) => {
      const a = e.detail.action;
      if (a && a.type === 'automation/createRequested' && a.resource === this.creating) {
        this.creating = null;
        $('#a-error').textContent = e.detail.reason;
        $('#a-error').hidden = false;
      }
    });
  }

  /** available reports whether the host serves automations. */
  available() {
    const init = this.client.initResult;
    return !!(init && init.automations);
  }

  updateButton() {
    $('#automations-btn').hidden = !this.available();
  }

  async show() {
    $('#placeholder').hidden = true;
    $('#session').hidden = true;
    $('#automations').hidden = false;
    document.body.classList.add('in-session');
    if (!this.available()) {
      $('#a-empty').textContent = 'This host does not run automations.';
      $('#a-new').hidden = true;
      return;
    }
    let st;
    try {
      st = await this.client.subscribe(CATALOGUE, undefined, 'automation');
    } catch (e) {
      this.app.toast(`Cannot list the automations: ${e.message}`);
      return;
    }
    if (!this.unwatch) this.unwatch = this.client.watch(CATALOGUE, (s) => this.render(s));
    this.render(st);
  }

  hide() {
    $('#automations').hidden = true;
  }

  openForm() {
    const f = $('#a-form');
    f.hidden = false;
    $('#a-error').hidden = true;
    const agents = (this.client.state('ahp-root://') || {}).agents || [];
    const sel = $('#a-provider');
    sel.replaceChildren(...agents.map((a) => h('option', { value: a.provider }, a.displayName || a.provider)));
    if (!$('#a-tz').value) {
      try { $('#a-tz').value = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch { $('#a-tz').value = 'UTC'; }
    }
    $('#a-title').focus();
  }

  create() {
    const title = $('#a-title').value.trim();
    const prompt = $('#a-prompt').value.trim();
    if (!title || !prompt) {
      $('#a-error').textContent = 'A title and a message are needed.';
      $('#a-error').hidden = false;
      return;
    }
    const def = {
      title,
      message: { text: prompt, origin: { kind: 'automation' } },
      session: {},
      enabled: $('#a-enabled').checked,
      triggers: [],
    };
    const cron = $('#a-cron').value.trim();
    if (cron) def.triggers.push({ id: 'schedule', kind: 'schedule', schedule: { expression: cron, timeZone: $('#a-tz').value.trim() || 'UTC' } });
    const provider = $('#a-provider').value;
    if (provider) def.session.provider = provider;
    const dir = $('#a-dir').value.trim();
    if (dir) def.session.workingDirectories = [dir.startsWith('file:') ? dir : `file://${dir.startsWith('/') ? '' : '/'}${dir}`];
    this.creating = `ahp-automation:/${crypto.randomUUID ? crypto.randomUUID() : String(Date.now())}`;
    $('#a-error').hidden = true;
    this.client.dispatch(CATALOGUE, { type: 'automation/createRequested', resource: this.creating, definition: def });
  }

  render(st) {
    if (!st) return;
    const entries = st.entries || [];
    if (this.creating && entries.some((e) => e.resource === this.creating)) {
      this.creating = null;
      $('#a-form').hidden = true;
      for (const id of ['#a-title', '#a-prompt', '#a-cron', '#a-dir']) $(id).value = '';
    }
    $('#a-empty').hidden = entries.length > 0;
    $('#a-list').replaceChildren(...entries.map((e) => this.entryView(e)));
  }

  entryView(e) {
    const d = e.definition;
    const ops = new Set(e.operations || []);
    const toggle = h('button', { type: 'button', class: 'a-toggle' }, d.enabled ? 'Disable' : 'Enable');
    toggle.disabled = !ops.has('update');
    toggle.onclick = () => this.client.dispatch(CATALOGUE, { type: 'automation/updateRequested', resource: e.resource, changes: { enabled: !d.enabled } });
    const run = h('button', { type: 'button', class: 'primary a-run' }, 'Run now');
    run.disabled = !ops.has('run');
    run.onclick = async () => {
      try {
        await this.client.request('runAutomation', { channel: CATALOGUE, automation: e.resource, requestId: crypto.randomUUID ? crypto.randomUUID() : String(Math.random()) });
      } catch (err) {
        this.app.toast(`The run did not start: ${err.message}`);
      }
    };
    const remove = h('button', { type: 'button', class: 'danger' }, 'Remove');
    remove.disabled = !ops.has('remove');
    remove.onclick = () => this.client.dispatch(CATALOGUE, { type: 'automation/removed', resource: e.resource });
    const runs = (e.runs || []).map((r) => {
      const session = r.primarySession
        ? h('a', { href: `#/s/${encodeURIComponent(r.primarySession)}` }, 'open session')
        : '';
      return h('li', { class: 'a-run-row', 'data-status': r.lifecycle.status },
        h('span', { class: `tag ${r.lifecycle.status === 'failed' ? 'error' : ''}` }, runStatus(r.lifecycle)), ' ',
        h('span', { class: 'muted' }, `${originText(r.origin)} · ${when(r.lifecycle.createdAt)}`), ' ', session);
    });
    return h('li', { class: 'a-entry', 'data-resource': e.resource },
      h('div', { class: 'session-head' },
        h('strong', {}, d.title), ' ',
        h('span', { class: 'tag' }, d.enabled ? 'enabled' : 'disabled'),
        h('span', { class: 'spacer' }), run, toggle, remove),
      h('div', { class: 'muted' }, `${scheduleText(d)}${e.nextRunAt && d.enabled ? ` · next ${when(e.nextRunAt)}` : ''}`),
      h('div', { class: 'a-message' }, d.message.text),
      runs.length ? h('ul', { class: 'a-runs' }, ...runs) : h('div', { class: 'muted' }, 'No runs yet.'),
      e.runsNextCursor ? h('button', {
        type: 'button', class: 'link a-older',
        onclick: () => this.client.request('fetchAutomationRuns', { channel: CATALOGUE, automation: e.resource, cursor: e.runsNextCursor })
          .catch((err) => this.app.toast(`Cannot load older runs: ${err.message}`)),
      }, 'Older runs') : null);
  }
}
