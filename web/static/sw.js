// The page's service worker: it keeps the app shell (the page, its
// stylesheet, scripts and icons) so the page opens, and can be installed
// to a home screen, when the host is out of reach. It never stores session
// data: that travels over the WebSocket, which a service worker does not
// see, and any other request (the token check, say) goes to the network
// untouched.

const CACHE = 'ahpd-shell-v1';

// The shell: what the page needs to start. xterm.js and highlight.js load
// on first use and are kept then.
const SHELL = [
  '/', '/app.css', '/manifest.webmanifest', '/icon-192.png', '/icon-512.png',
  '/js/app.js', '/js/client.js', '/js/reducers.js', '/js/markdown.js', '/js/dom.js',
  '/js/text.js', '/js/terminal.js', '/js/changes.js', '/js/automations.js', '/vendor/markdown-it.mjs',
];
const LAZY = ['/vendor/xterm.mjs', '/vendor/xterm-addon-fit.mjs', '/vendor/xterm.css', '/vendor/highlight.mjs'];

self.addEventListener('install', (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (e) => {
  e.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

// Network first, so a new ahpd's page is used as soon as the host answers;
// the cached shell when it does not.
self.addEventListener('fetch', (e) => {
  const req = e.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin) return;
  const path = req.mode === 'navigate' ? '/' : url.pathname;
  if (url.search && req.mode !== 'navigate') return;
  if (!SHELL.includes(path) && !LAZY.includes(path)) return;
  e.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const res = await fetch(req);
      if (res.ok) await cache.put(path, res.clone());
      return res;
    } catch (err) {
      const hit = await cache.match(path);
      if (hit) return hit;
      throw err;
    }
  })());
});
