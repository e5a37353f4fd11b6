// Markdown rendering for streamed text, with markdown-it (raw HTML off,
// so the agent's text can never inject markup or script).
//
// A streamed part grows by small deltas. Rendering all of it again on
// every frame costs time proportional to the whole text, which freezes
// the page on long replies. A StreamView instead splits the text into
// blocks at blank lines outside code fences: finished blocks are rendered
// once and kept, and only the block still growing is rendered again.

import markdownit from '../vendor/markdown-it.mjs';

const md = markdownit({ html: false, linkify: true, breaks: false });

// Links open outside the page, without handing it to the opened page.
const defaultLinkOpen = md.renderer.rules.link_open ||
  ((tokens, idx, options, env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet('target', '_blank');
  tokens[idx].attrSet('rel', 'noopener noreferrer');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

// Code blocks get a copy button, and colours from highlight.js, which is
// loaded the first time a code block shows (130 KB the page does not need
// before then).
let hljs = null;
let loadingHL = null;

function loadHighlighter() {
  if (!loadingHL) {
    loadingHL = import('../vendor/highlight.mjs').then((m) => {
      hljs = m.default;
      hljs.configure({ ignoreUnescapedHTML: true });
      for (const code of document.querySelectorAll('.md pre > code:not(.hljs)')) highlight(code);
    }, (e) => { loadingHL = null; console.warn('highlight.js did not load', e); });
  }
}

function highlight(code) {
  if (!hljs || code.classList.contains('hljs')) return;
  // A language the fence names, or a guess for code of some length.
  const named = [...code.classList].some((c) => c.startsWith('language-') && hljs.getLanguage(c.slice(9)));
  if (!named && code.textContent.length < 40) return;
  hljs.highlightElement(code);
}

/**
 * enhanceCode gives the code blocks in el a copy button and, once
 * highlight.js is loaded, colours.
 */
export function enhanceCode(el) {
  const blocks = el.querySelectorAll('pre > code');
  if (!blocks.length) return;
  for (const code of blocks) {
    const pre = code.parentElement;
    if (!pre.querySelector(':scope > button.copy')) {
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.className = 'copy';
      btn.textContent = 'Copy';
      btn.title = 'Copy the code';
      btn.addEventListener('click', () => copyText(code.textContent, btn));
      pre.append(btn);
    }
    highlight(code);
  }
  if (!hljs) loadHighlighter();
}

/** copyText puts text on the clipboard and says so on the button. */
export async function copyText(text, btn) {
  let ok = false;
  try {
    await navigator.clipboard.writeText(text);
    ok = true;
  } catch {
    // Outside a secure context: the older way, through a selection.
    const ta = document.createElement('textarea');
    ta.value = text;
    ta.setAttribute('readonly', '');
    ta.style.position = 'fixed';
    ta.style.opacity = '0';
    document.body.append(ta);
    ta.select();
    try { ok = document.execCommand('copy'); } catch { ok = false; }
    ta.remove();
  }
  if (btn) {
    btn.textContent = ok ? 'Copied' : 'Copy failed';
    btn.dataset.copied = ok ? 'yes' : 'no';
    setTimeout(() => { btn.textContent = 'Copy'; delete btn.dataset.copied; }, 1500);
  }
  return ok;
}

/** render returns the HTML of a markdown text. */
export function render(text) {
  return md.render(text || '');
}

// A growing block is cut anyway once it passes this many characters, at a
// line break (or a space) outside code fences, so a reply with no blank
// lines still renders in bounded time per frame.
const MAX_TAIL = 2048;

// Milliseconds one update may spend rendering finished blocks.
const FRAME_BUDGET = 8;

export class StreamView {
  constructor(el) {
    this.el = el;
    this.el.classList.add('md');
    this.done = 0; // length of the text rendered into frozen blocks
    this.inFence = false; // whether done ends inside a code fence
    this.text = '';
    this.tail = document.createElement('div');
    this.tail.className = 'md-block';
    this.el.append(this.tail);
  }

  /** update shows text, which extends what was shown before or replaces it. */
  update(text) {
    text = text || '';
    if (text === this.text && !this.behind) return;
    if (text.length < this.done || !text.startsWith(this.text.slice(0, this.done))) this.reset();
    this.text = text;
    // Freeze finished blocks within a time budget. After a stall (a busy
    // machine, a backgrounded tab) much text can arrive at once; what the
    // budget leaves is shown as plain text and rendered on later frames,
    // so no single task holds the page for long.
    const until = performance.now() + FRAME_BUDGET;
    for (;;) {
      const cut = this.nextCut(text);
      if (cut <= this.done) break;
      if (performance.now() > until) break;
      const block = document.createElement('div');
      block.className = 'md-block';
      block.innerHTML = render(text.slice(this.done, cut));
      enhanceCode(block);
      this.el.insertBefore(block, this.tail);
      this.inFence = this.fenceAfter(text.slice(this.done, cut), this.inFence);
      this.done = cut;
    }
    const rest = text.slice(this.done);
    this.behind = rest.length > 2 * MAX_TAIL;
    if (this.behind) {
      this.tail.textContent = rest;
      if (!this.scheduled) {
        this.scheduled = true;
        requestAnimationFrame(() => { this.scheduled = false; this.update(this.text); });
      }
      return;
    }
    // An open fence continues into the tail: render it as code.
    this.tail.innerHTML = render(this.inFence ? '```\n' + rest : rest);
    enhanceCode(this.tail);
  }

  reset() {
    this.behind = false;
    this.el.replaceChildren(this.tail);
    this.done = 0;
    this.inFence = false;
    this.text = '';
  }

  // nextCut returns where the next finished block ends: after the first
  // blank line outside a fence beyond done, or at a line break or space
  // once the tail is long; done itself when there is none.
  nextCut(text) {
    let fence = this.inFence;
    let pos = this.done;
    let lastBreak = -1;
    while (pos < text.length) {
      const nl = text.indexOf('\n', pos);
      if (nl < 0) break;
      const line = text.slice(pos, nl);
      if (/^\s{0,3}(```|~~~)/.test(line)) fence = !fence;
      if (!fence) lastBreak = nl + 1;
      if (!fence && line.trim() === '' && nl > this.done) return nl + 1;
      pos = nl + 1;
    }
    if (text.length - this.done > MAX_TAIL && !fence) {
      if (lastBreak > this.done) return lastBreak;
      if (this.inFence) return this.done;
      const sp = text.lastIndexOf(' ', text.length - 1);
      if (sp > this.done) return sp + 1;
    }
    return this.done;
  }

  fenceAfter(chunk, fence) {
    for (const line of chunk.split('\n')) if (/^\s{0,3}(```|~~~)/.test(line)) fence = !fence;
    return fence;
  }
}
