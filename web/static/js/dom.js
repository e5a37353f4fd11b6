// Small DOM helpers shared by the page's views.

/** h creates an element with attributes, listeners (on*) and children. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const $ = (sel) => document.querySelector(sel);

// diffLines compares two texts line by line (longest common subsequence)
// and returns the lines in order, each {kind: 'ctx' | 'add' | 'del', text,
// a, b}: its index among the old lines (a) and the new ones (b), where it
// has one, and for a deleted line the index of the new line it sits
// before. Large texts, where the table would be too big, come back as all
// of the old lines deleted and all of the new ones added.
export function diffLines(a, b) {
  const x = a.split('\n'); const y = b.split('\n');
  if (x.length && x[x.length - 1] === '' && y.length && y[y.length - 1] === '') { x.pop(); y.pop(); }
  const out = [];
  const n = x.length; const m = y.length;
  if (n * m > 4e6) {
    x.forEach((text, i) => out.push({ kind: 'del', text, a: i, b: 0 }));
    y.forEach((text, j) => out.push({ kind: 'add', text, b: j }));
    return out;
  }
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  let i = 0; let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { out.push({ kind: 'ctx', text: x[i], a: i, b: j }); i++; j++; }
    else if (i < n && (j === m || L[i + 1][j] >= L[i][j + 1])) { out.push({ kind: 'del', text: x[i], a: i, b: j }); i++; }
    else { out.push({ kind: 'add', text: y[j], b: j }); j++; }
  }
  return out;
}

/** diffView renders a line diff of two texts. */
export function diffView(a, b) {
  const pre = h('pre', { class: 'diff' });
  for (const l of diffLines(a, b)) pre.append(diffLine(l));
  return pre;
}

const MARK = { ctx: ' ', add: '+', del: '-' };

/**
 * diffLine renders one line of diffLines, with its line numbers on the old
 * and the new side (shown by the stylesheet, not part of its text).
 */
export function diffLine(l) {
  const old = l.kind === 'add' || l.a == null ? '' : String(l.a + 1);
  const neu = l.kind === 'del' || l.b == null ? '' : String(l.b + 1);
  return h('div', { class: l.kind, 'data-ln': `${old.padStart(4)} ${neu.padStart(4)}` }, `${MARK[l.kind]} ${l.text}`);
}
