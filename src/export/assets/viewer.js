// pi-session's HTML export viewer. The page carries the session packed: a skeleton (the tree's
// ids, parents, rows, previews and labels) and the entries in chunks, each gzip in base64 in an
// inert element, decoded here only when needed (DecompressionStream): the tree and the path's
// last entries come first in the document, so the page shows before the rest is read, and a
// session larger than a JavaScript string still opens. The tree is drawn virtually: only the
// rows on screen exist. Session text is only ever set as text or as Markdown rendered with raw
// HTML shown as text; the page's Content-Security-Policy runs no other script and fetches
// nothing.
(function () {
  "use strict";

  var $ = function (id) { return document.getElementById(id); };
  var treeEl = $("tree");
  var treeRowsEl = $("tree-rows");
  var treeHead = $("tree-head");
  var conversation = $("conversation");
  var pathHead = $("path-head");
  var searchInput = $("search");
  var searchStatus = $("search-status");
  var resultsEl = $("results");

  // ---- packed data ------------------------------------------------------------------------

  var BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  var BASE64_VALUE = new Uint8Array(128);
  for (var b = 0; b < 64; b++) BASE64_VALUE[BASE64.charCodeAt(b)] = b;

  // Base64 text to bytes: the browser's own decoder where it has one, else by hand (atob's
  // string would need the same loop).
  function base64Bytes(text) {
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
    var end = text.length;
    while (end > 0 && text.charCodeAt(end - 1) === 61) end--;
    var bytes = new Uint8Array(Math.floor(end * 3 / 4));
    var at = 0;
    for (var i = 0; i + 3 < end; i += 4) {
      var n = (BASE64_VALUE[text.charCodeAt(i)] << 18) | (BASE64_VALUE[text.charCodeAt(i + 1)] << 12) |
        (BASE64_VALUE[text.charCodeAt(i + 2)] << 6) | BASE64_VALUE[text.charCodeAt(i + 3)];
      bytes[at++] = n >> 16; bytes[at++] = (n >> 8) & 255; bytes[at++] = n & 255;
    }
    var rest = end - i;
    if (rest > 1) {
      var m = (BASE64_VALUE[text.charCodeAt(i)] << 18) | (BASE64_VALUE[text.charCodeAt(i + 1)] << 12) |
        (rest > 2 ? BASE64_VALUE[text.charCodeAt(i + 2)] << 6 : 0);
      bytes[at++] = m >> 16;
      if (rest > 2) bytes[at++] = (m >> 8) & 255;
    }
    return bytes;
  }

  // The text packed in an element (gzip of UTF-8, in base64). The inflated pieces are read
  // and joined here: Chromium's Response.text() over the same stream is many times slower.
  function unpack(element) {
    var inflate = new DecompressionStream("gzip");
    var writer = inflate.writable.getWriter();
    var ignore = function () { /* the reader reports a broken stream */ };
    writer.write(base64Bytes(element.textContent)).catch(ignore);
    writer.close().catch(ignore);
    var reader = inflate.readable.getReader();
    var parts = [];
    var size = 0;
    var read = function () {
      return reader.read().then(function (step) {
        if (step.done) return;
        parts.push(step.value);
        size += step.value.length;
        return read();
      });
    };
    return read().then(function () {
      var bytes = new Uint8Array(size);
      var at = 0;
      for (var i = 0; i < parts.length; i++) {
        bytes.set(parts[i], at);
        at += parts[i].length;
      }
      return new TextDecoder().decode(bytes);
    });
  }

  // The whole document has been read: every chunk element exists.
  var parsed = new Promise(function (resolve) {
    if (document.readyState !== "loading") resolve();
    else document.addEventListener("DOMContentLoaded", function () { resolve(); });
  });

  // ---- text helpers ----------------------------------------------------------------------

  function esc(text) {
    return String(text)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
  }

  function str(value) {
    return typeof value === "string" ? value : value == null ? "" : String(value);
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text != null) node.textContent = text;
    return node;
  }

  function formatTime(value) {
    var date = typeof value === "number" ? new Date(value) : new Date(str(value));
    if (isNaN(date.getTime())) return str(value);
    return date.toLocaleString(undefined, {
      year: "numeric", month: "short", day: "numeric",
      hour: "2-digit", minute: "2-digit", second: "2-digit",
    });
  }

  // ---- Markdown: marked with raw HTML shown as text, links and images checked ----------

  var SAFE_LINK = /^(https?:|mailto:|#)/i;
  var SAFE_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$/i;

  function highlight(code, lang) {
    if (typeof hljs === "undefined" || code.length > 200000) return esc(code);
    try {
      if (lang && hljs.getLanguage(lang)) return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
      if (code.length < 20000) return hljs.highlightAuto(code).value;
    } catch (e) { /* shown plain below */ }
    return esc(code);
  }

  var md = null;
  if (typeof marked !== "undefined") {
    md = new marked.Marked({
      gfm: true,
      breaks: false,
      renderer: {
        html: function (token) { return esc(token.raw != null ? token.raw : token.text); },
        link: function (token) {
          var inner = this.parser.parseInline(token.tokens);
          if (!SAFE_LINK.test(str(token.href))) return inner;
          var title = token.title ? ' title="' + esc(token.title) + '"' : "";
          return '<a href="' + esc(token.href) + '"' + title + ' rel="noopener noreferrer nofollow" target="_blank">' + inner + "</a>";
        },
        image: function (token) {
          if (SAFE_IMAGE.test(str(token.href))) return '<img src="' + esc(token.href) + '" alt="' + esc(token.text) + '">';
          return '<span class="md-image">[image: ' + esc(token.text || token.href) + "]</span>";
        },
        code: function (token) {
          var lang = str(token.lang).split(/\s/)[0];
          return '<pre class="code"><code class="hljs">' + highlight(str(token.text), lang) + "</code></pre>";
        },
      },
    });
  }

  function markdown(text, target) {
    var box = el("div", "md");
    text = str(text);
    if (md && text.length < 2000000) {
      try {
        box.innerHTML = md.parse(text);
        target.appendChild(box);
        return box;
      } catch (e) { /* shown as text below */ }
    }
    box.classList.add("plain");
    box.textContent = text;
    target.appendChild(box);
    return box;
  }

  function codeBlock(text, lang, target) {
    var pre = el("pre", "code");
    var code = el("code", "hljs");
    code.innerHTML = highlight(str(text), lang);
    pre.appendChild(code);
    target.appendChild(pre);
    return pre;
  }

  function details(cls, summary, open, target) {
    var box = el("details", cls);
    if (open) box.open = true;
    var head = el("summary");
    if (typeof summary === "string") head.textContent = summary;
    else head.appendChild(summary);
    box.appendChild(head);
    target.appendChild(box);
    return box;
  }

  function image(block, target) {
    var mime = str(block.mimeType);
    var src = "data:" + mime + ";base64," + str(block.data);
    if (/^image\/(png|jpeg|gif|webp)$/i.test(mime) && /^[A-Za-z0-9+/=\s]*$/.test(str(block.data))) {
      var img = el("img", "image");
      img.alt = "image (" + mime + ")";
      img.src = src;
      target.appendChild(img);
    } else {
      target.appendChild(el("div", "note", "[image: " + mime + "]"));
    }
  }

  function json(value) {
    try { return JSON.stringify(value, null, 2); } catch (e) { return str(value); }
  }

  // ---- one entry --------------------------------------------------------------------------

  function contentBlocks(content, target, asMarkdown) {
    if (typeof content === "string") {
      if (asMarkdown) markdown(content, target);
      else target.appendChild(el("pre", "output", content));
      return;
    }
    if (!Array.isArray(content)) return;
    for (var i = 0; i < content.length; i++) {
      var block = content[i] || {};
      switch (block.type) {
        case "text":
          if (asMarkdown) markdown(block.text, target);
          else target.appendChild(el("pre", "output", str(block.text)));
          break;
        case "thinking":
          var thinking = details("thinking", "Thinking", false, target);
          markdown(block.thinking, thinking);
          break;
        case "toolCall":
          toolCall(block, target);
          break;
        case "image":
          image(block, target);
          break;
        default:
          codeBlock(json(block), "json", details("raw", "Content: " + str(block.type), false, target));
      }
    }
  }

  function toolCall(block, target) {
    var head = el("span");
    head.appendChild(el("span", "tool-name", str(block.name)));
    var args = block.arguments || {};
    var brief = typeof args.command === "string" ? args.command
      : typeof args.path === "string" ? args.path
      : typeof args.file_path === "string" ? args.file_path : "";
    if (brief) head.appendChild(el("span", "tool-brief", " " + brief.split("\n")[0].slice(0, 160)));
    var box = details("tool-call", head, false, target);
    if (typeof args.command === "string" && str(block.name) === "bash") codeBlock(args.command, "bash", box);
    else codeBlock(json(args), "json", box);
  }

  function textOf(content) {
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    var parts = [];
    for (var i = 0; i < content.length; i++) {
      var block = content[i] || {};
      if (block.type === "text") parts.push(str(block.text));
    }
    return parts.join("\n");
  }

  var ROLE_NAMES = {
    user: "User", assistant: "Assistant", toolResult: "Tool result",
    bashExecution: "Shell", custom: "Extension message",
    branchSummary: "Branch summary", compactionSummary: "Compaction summary",
  };

  function renderMessage(message, body, head) {
    var role = str(message.role);
    head.kind.textContent = ROLE_NAMES[role] || ("Message (" + role + ")");
    switch (role) {
      case "user":
        contentBlocks(message.content, body, true);
        break;
      case "assistant":
        if (message.model) head.extra.textContent = str(message.model);
        contentBlocks(message.content, body, true);
        if (message.errorMessage) body.appendChild(el("div", "error", str(message.errorMessage)));
        else if (message.stopReason === "aborted") body.appendChild(el("div", "note", "(aborted)"));
        break;
      case "toolResult":
        head.kind.textContent = "Tool result";
        head.extra.textContent = str(message.toolName);
        var text = textOf(message.content);
        var lines = text.split("\n").length;
        var summary = (message.isError ? "Error: " : "") + (text.split("\n")[0].slice(0, 160) || "(no text)") +
          (lines > 1 ? "  (" + lines + " lines)" : "");
        var box = details("tool-result" + (message.isError ? " is-error" : ""), summary, lines <= 12, body);
        contentBlocks(message.content, box, false);
        break;
      case "bashExecution":
        var shell = el("div", "bash");
        shell.appendChild(el("pre", "command", "$ " + str(message.command)));
        var out = details("tool-result", "Output" + (message.exitCode != null ? " (exit code " + message.exitCode + ")" : "") +
          (message.cancelled ? " (cancelled)" : "") + (message.truncated ? " (truncated)" : ""), true, shell);
        out.appendChild(el("pre", "output", str(message.output)));
        body.appendChild(shell);
        break;
      case "custom":
        head.extra.textContent = str(message.customType);
        contentBlocks(message.content, body, true);
        break;
      case "branchSummary":
      case "compactionSummary":
        markdown(message.summary, body);
        break;
      default:
        codeBlock(json(message), "json", details("raw", "Message", false, body));
    }
  }

  function renderEntry(entry, article) {
    entry = entry || {};
    var head = article.querySelector(".entry-head");
    var parts = { kind: head.querySelector(".kind"), extra: head.querySelector(".extra") };
    var body = el("div", "entry-body");
    switch (entry.type) {
      case "message":
        renderMessage(entry.message || {}, body, parts);
        break;
      case "compaction":
        parts.kind.textContent = "Compaction";
        if (entry.tokensBefore != null) parts.extra.textContent = entry.tokensBefore + " tokens summarized";
        markdown(entry.summary, details("summary", "Summary of the conversation before this point", true, body));
        break;
      case "branch_summary":
        parts.kind.textContent = "Branch summary";
        markdown(entry.summary, details("summary", "Summary of the abandoned branch", true, body));
        break;
      case "custom_message":
        parts.kind.textContent = "Extension message";
        parts.extra.textContent = str(entry.customType);
        contentBlocks(entry.content, body, true);
        break;
      case "model_change":
        parts.kind.textContent = "Model";
        body.appendChild(el("div", "note", str(entry.provider) + "/" + str(entry.modelId)));
        break;
      case "thinking_level_change":
        parts.kind.textContent = "Thinking level";
        body.appendChild(el("div", "note", str(entry.thinkingLevel)));
        break;
      case "session_info":
        parts.kind.textContent = "Session name";
        body.appendChild(el("div", "note", str(entry.name)));
        break;
      case "label":
        parts.kind.textContent = "Label";
        body.appendChild(el("div", "note", (entry.label == null ? "(cleared)" : str(entry.label)) + " on " + str(entry.targetId)));
        break;
      case "custom":
        parts.kind.textContent = "Extension data";
        parts.extra.textContent = str(entry.customType);
        codeBlock(json(entry.data), "json", details("raw", "Data", false, body));
        break;
      default:
        parts.kind.textContent = "Entry " + str(entry.type);
        codeBlock(json(entry), "json", details("raw", "Data", false, body));
    }
    article.appendChild(body);
  }


  // ---- the session's skeleton and its entries -------------------------------------------

  var count = 0;
  var ids = [];
  var parents = [];
  var rows = [];
  var previews = [];
  var kinds = [];
  var classes = [];
  var labels = {};
  var leaf = null;
  var byId = new Map();
  var inFirst = null;     // Uint8Array: the position is in the first chunk
  var chunkOf = null;     // Int32Array: the chunk holding each position (-1: not known yet)
  var slotOf = null;      // Int32Array: its line in that chunk
  var chunkList = [];     // {element, positions}

  function addChunk(element, positions) {
    var c = chunkList.length;
    chunkList.push({ element: element, positions: positions });
    for (var k = 0; k < positions.length; k++) {
      chunkOf[positions[k]] = c;
      slotOf[positions[k]] = k;
    }
  }

  // The chunks after the first hold, in order, the positions from their `data-from` to the
  // next one's (less those of the first chunk); they exist once the whole document is read.
  var allChunks = null;
  function registerChunks() {
    var elements = document.querySelectorAll("script.pi-chunk");
    for (var e = 0; e < elements.length; e++) {
      var from = Number(elements[e].getAttribute("data-from"));
      var to = e + 1 < elements.length ? Number(elements[e + 1].getAttribute("data-from")) : count;
      var positions = [];
      for (var p = from; p < to && p < count; p++) if (!inFirst[p]) positions.push(p);
      addChunk(elements[e], positions);
    }
  }

  // Decoded chunks, as their lines, a few at a time: what is on screen, not the session.
  var LINES_KEPT = 8;
  var linesCache = new Map();
  function chunkLines(c) {
    var lines = linesCache.get(c);
    if (lines) {
      linesCache.delete(c);
      linesCache.set(c, lines);
      return lines;
    }
    lines = unpack(chunkList[c].element).then(function (text) { return text.length ? text.split("\n") : []; });
    linesCache.set(c, lines);
    if (linesCache.size > LINES_KEPT) linesCache.delete(linesCache.keys().next().value);
    return lines;
  }

  function parseEntry(line) {
    try { return JSON.parse(line); } catch (e) { return { type: "(unreadable)", error: String(e) }; }
  }

  var ENTRIES_KEPT = 2000;
  var entryCache = new Map();
  function entryAt(position) {
    var known = entryCache.get(position);
    if (known) return Promise.resolve(known);
    var ready = chunkOf[position] >= 0 ? Promise.resolve() : allChunks;
    return ready.then(function () {
      var c = chunkOf[position];
      if (c < 0) return {};
      return chunkLines(c).then(function (lines) {
        var entry = parseEntry(lines[slotOf[position]]);
        entryCache.set(position, entry);
        if (entryCache.size > ENTRIES_KEPT) entryCache.delete(entryCache.keys().next().value);
        return entry;
      });
    });
  }

  function classOf(position) {
    return classes[kinds[position]] || "other";
  }

  // ---- paths and selection ----------------------------------------------------------------

  function pathTo(position) {
    var path = [];
    var seen = new Set();
    while (position != null && position >= 0 && !seen.has(position)) {
      seen.add(position);
      path.push(position);
      position = parents[position];
    }
    return path.reverse();
  }

  var onActive = null;    // Uint8Array: on the leaf's path
  var onSelected = null;  // Uint8Array: on the selected path
  var isHit = null;       // Uint8Array: found by the search
  var selected = null;
  var selectedPath = [];

  // ---- the tree, drawn virtually ----------------------------------------------------------

  // Rows have one height (the style sheet's .node), so a row's place is its index times it.
  var ROW_HEIGHT = 24;
  var OVERSCAN = 4;
  var rowCount = 0;
  var rowOf = null;       // Int32Array: the first row showing each position (-1: none)
  var drawPending = false;

  function drawTree() {
    drawPending = false;
    var top = treeEl.scrollTop;
    var first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    var last = Math.min(rowCount, Math.ceil((top + treeEl.clientHeight) / ROW_HEIGHT) + OVERSCAN);
    var html = [];
    for (var r = first; r < last; r++) {
      var position = rows[2 * r];
      var indent = rows[2 * r + 1];
      var id = ids[position];
      var preview = String(previews[position] == null ? "" : previews[position]);
      var colon = preview.indexOf(": ");
      var role = colon > 0 && colon < 20 ? preview.slice(0, colon) : "";
      var text = role ? preview.slice(colon + 2) : preview;
      if (text.length > 1 && text.charAt(0) === '"' && text.charAt(text.length - 1) === '"') text = text.slice(1, -1);
      var cls = "node " + classOf(position) + (onActive[position] ? " active" : "") +
        (position === leaf ? " leaf" : "") + (onSelected[position] ? " on-path" : "") +
        (position === selected ? " selected" : "") + (isHit[position] ? " hit" : "");
      var label = id != null && Object.prototype.hasOwnProperty.call(labels, id) ? labels[id] : null;
      html.push('<div class="', cls, '" role="treeitem" data-entry-id="', esc(id == null ? "" : id),
        '" data-pos="', position, '" data-row="', r, '" style="top:', r * ROW_HEIGHT, "px;--indent:", indent, '">',
        '<span class="dot"></span>',
        role ? '<span class="role">' + esc(role) + "</span>" : "",
        '<span class="preview">', esc(text), "</span>",
        label != null ? '<span class="label">' + esc(str(label)) + "</span>" : "",
        position === leaf ? '<span class="leaf-mark">leaf</span>' : "",
        "</div>");
    }
    if (rowCount === 0) html.push('<div class="empty">No entries</div>');
    treeRowsEl.innerHTML = html.join("");
  }

  function redrawTree() {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(drawTree);
  }

  function setUpTree() {
    rowCount = rows.length / 2;
    rowOf = new Int32Array(count).fill(-1);
    for (var r = rowCount - 1; r >= 0; r--) rowOf[rows[2 * r]] = r;
    treeRowsEl.style.height = rowCount * ROW_HEIGHT + "px";
    treeHead.textContent = rowCount.toLocaleString("en") + (rowCount === 1 ? " row" : " rows") + " in the tree";
    treeHead.setAttribute("data-rows", String(rowCount));
    treeEl.addEventListener("scroll", redrawTree, { passive: true });
    window.addEventListener("resize", redrawTree);
    drawTree();
  }

  // Brings a position's row into view (centred when it was off screen).
  function scrollTreeTo(position) {
    var r = rowOf[position];
    if (r < 0) return;
    var top = r * ROW_HEIGHT;
    if (top < treeEl.scrollTop || top + ROW_HEIGHT > treeEl.scrollTop + treeEl.clientHeight) {
      treeEl.scrollTop = Math.max(0, top - treeEl.clientHeight / 2);
    }
    drawTree();
  }

  // ---- selection and the conversation -------------------------------------------------------

  var selection = 0;

  function select(position, options) {
    options = options || {};
    var i;
    for (i = 0; i < selectedPath.length; i++) onSelected[selectedPath[i]] = 0;
    selected = position;
    selectedPath = position == null ? [] : pathTo(position);
    for (i = 0; i < selectedPath.length; i++) onSelected[selectedPath[i]] = 1;
    var current = ++selection;
    renderConversation();
    if (position != null && options.updateHash !== false && ids[position] != null) {
      history.replaceState(null, "", "#leaf=" + encodeURIComponent(ids[position]));
    }
    if (position != null && options.scrollTree !== false) scrollTreeTo(position);
    else drawTree();
    if (position == null) {
      conversation.setAttribute("data-shown", "");
      return Promise.resolve();
    }
    return showEntry(position, current);
  }

  // A long path is shown in pages from its end: the DOM holds what was asked for, not every
  // entry of a 100 MB session. Earlier pages load when the reader scrolls up to them.
  var PAGE = 150;
  var shownFrom = 0;
  var earlier = null;
  var observer = null;

  function makeArticle(position) {
    var article = el("article", "entry " + classOf(position) + (onActive[position] ? "" : " off-active"));
    article.setAttribute("data-entry-id", ids[position] == null ? "" : ids[position]);
    article.setAttribute("data-pos", position);
    var head = el("div", "entry-head");
    head.appendChild(el("span", "kind", classOf(position).replace(/^(role|type)-/, "")));
    head.appendChild(el("span", "extra"));
    var link = el("a", "time");
    link.href = "#leaf=" + encodeURIComponent(ids[position] == null ? "" : ids[position]);
    link.title = "Link to this entry (" + str(ids[position]) + ")";
    head.appendChild(link);
    article.appendChild(head);
    observer.observe(article);
    return article;
  }

  function renderConversation() {
    if (observer) observer.disconnect();
    conversation.textContent = "";
    conversation.removeAttribute("data-shown");
    renderPathHead();
    // Entries are filled in as they come near the screen: a page costs its shells only.
    observer = new IntersectionObserver(function (seen) {
      for (var i = 0; i < seen.length; i++) {
        if (!seen[i].isIntersecting) continue;
        if (seen[i].target === earlier) loadEarlier();
        else fill(seen[i].target);
      }
    }, { root: null, rootMargin: "1500px 0px" });
    shownFrom = Math.max(0, selectedPath.length - PAGE);
    earlier = el("button", "load-earlier");
    earlier.type = "button";
    earlier.addEventListener("click", loadEarlier);
    conversation.appendChild(earlier);
    var fragment = document.createDocumentFragment();
    for (var i = shownFrom; i < selectedPath.length; i++) fragment.appendChild(makeArticle(selectedPath[i]));
    if (selectedPath.length === 0) fragment.appendChild(el("div", "empty", "No entries on this path."));
    conversation.appendChild(fragment);
    updateEarlier();
  }

  function updateEarlier() {
    earlier.hidden = shownFrom === 0;
    earlier.textContent = "Show " + Math.min(PAGE, shownFrom) + " earlier entries (" + shownFrom + " before these)";
    if (shownFrom > 0) observer.observe(earlier);
    else observer.unobserve(earlier);
  }

  function loadEarlier() {
    if (shownFrom === 0) return;
    var from = Math.max(0, shownFrom - PAGE);
    var fragment = document.createDocumentFragment();
    for (var i = from; i < shownFrom; i++) fragment.appendChild(makeArticle(selectedPath[i]));
    conversation.insertBefore(fragment, earlier.nextSibling);
    shownFrom = from;
    // Observed again, so that a reader still at the top gets the page before it too.
    observer.unobserve(earlier);
    updateEarlier();
  }

  // Renders an entry's body once its chunk is decoded; `filled` marks it done.
  function fill(article) {
    if (article.tagName !== "ARTICLE" || article.filling) return article.filling || Promise.resolve();
    if (observer) observer.unobserve(article);
    var position = Number(article.getAttribute("data-pos"));
    article.filling = entryAt(position).then(function (entry) {
      article.querySelector(".time").textContent = formatTime(entry.timestamp);
      renderEntry(entry, article);
      article.classList.add("filled");
    });
    return article.filling;
  }

  function showEntry(position, current) {
    var article = conversation.querySelector('article[data-pos="' + position + '"]');
    if (!article) return Promise.resolve();
    // It and what covers the screen before it are drawn before the scroll, so later ones
    // render above the view without moving it.
    var before = [];
    for (var previous = article; previous && previous.tagName === "ARTICLE" && before.length < 12;
      previous = previous.previousElementSibling) before.push(fill(previous));
    return Promise.all(before).then(function () {
      if (current !== selection) return;
      var screen = $("main").clientHeight;
      var covered = 0;
      var more = [];
      for (var previous = article; previous && previous.tagName === "ARTICLE" && covered < 2 * screen;
        previous = previous.previousElementSibling) {
        more.push(fill(previous));
        covered += previous.offsetHeight;
      }
      return Promise.all(more);
    }).then(function () {
      if (current !== selection) return;
      conversation.querySelectorAll(".entry.target").forEach(function (a) { a.classList.remove("target"); });
      article.classList.add("target");
      // The selected entry ends its path: it is shown at the bottom, the way the conversation
      // led to it, unless it is taller than the screen.
      var tall = article.offsetHeight > $("main").clientHeight * 0.7;
      article.scrollIntoView({ block: tall ? "start" : "end" });
      conversation.setAttribute("data-shown", ids[position] == null ? "" : ids[position]);
    });
  }

  function renderPathHead() {
    pathHead.textContent = "";
    var info = el("div", "path-info");
    var active = selected == null || onActive[selected];
    info.appendChild(el("span", "path-count", selectedPath.length + " entries on this path"));
    info.appendChild(el("span", active ? "badge active" : "badge other",
      selected === leaf ? "the session's leaf" : active ? "on the active path" : "on another branch"));
    if (selected !== leaf && leaf != null) {
      var back = el("button", "to-leaf", "Show the leaf");
      back.type = "button";
      back.addEventListener("click", function () { select(leaf); });
      info.appendChild(back);
    }
    pathHead.appendChild(info);
  }

  // ---- header ------------------------------------------------------------------------------

  function renderHeader(skeleton) {
    var header = skeleton.header || {};
    $("title").textContent = skeleton.name || "Session " + str(header.id);
    var meta = $("meta");
    var lines = [
      ["cwd", str(header.cwd)],
      ["started", header.timestamp ? formatTime(header.timestamp) : ""],
      ["entries", String(count)],
      ["file", str(skeleton.file)],
    ];
    if (header.parentSession) lines.push(["forked from", str(header.parentSession)]);
    for (var i = 0; i < lines.length; i++) {
      if (!lines[i][1]) continue;
      var line = el("div", "meta-row");
      line.appendChild(el("span", "meta-key", lines[i][0]));
      line.appendChild(el("span", "meta-value", lines[i][1]));
      meta.appendChild(line);
    }
  }

  // ---- search: every chunk decoded in turn, its raw text scanned, candidates parsed -------

  var SKIP_KEYS = { id: 1, parentId: 1, timestamp: 1, data: 1, signature: 1, thinkingSignature: 1, textSignature: 1, type: 1 };

  function collect(value, out) {
    if (typeof value === "string") out.push(value);
    else if (Array.isArray(value)) for (var i = 0; i < value.length; i++) collect(value[i], out);
    else if (value && typeof value === "object") {
      for (var key in value) if (!SKIP_KEYS[key]) collect(value[key], out);
    }
  }

  function textOfEntry(entry) {
    var parts = [];
    collect(entry, parts);
    return parts.join("\n");
  }

  // Chunk texts kept for the next search, up to a budget of characters.
  var SCAN_KEPT = 64 * 1024 * 1024;
  var scanCache = new Map();
  var scanPending = new Map();
  var scanKept = 0;
  function scanText(c) {
    var known = scanCache.get(c);
    if (known) return Promise.resolve(known);
    var pending = scanPending.get(c);
    if (pending) return pending;
    pending = unpack(chunkList[c].element).then(function (text) {
      scanPending.delete(c);
      if (scanKept + text.length <= SCAN_KEPT) {
        scanCache.set(c, text);
        scanKept += text.length;
      }
      return text;
    });
    scanPending.set(c, pending);
    return pending;
  }

  // The lines of `text` where `find` (a global RegExp) matches, added to `found`.
  function linesMatching(text, find, found) {
    var line = 0;
    var lineStart = 0;
    find.lastIndex = 0;
    for (var match = find.exec(text); match; match = find.exec(text)) {
      var at = match.index;
      for (var nl = text.indexOf("\n", lineStart); nl >= 0 && nl < at; nl = text.indexOf("\n", lineStart)) {
        line++;
        lineStart = nl + 1;
      }
      found.add(line);
      var end = text.indexOf("\n", at);
      if (end < 0) break;
      find.lastIndex = end + 1;
    }
  }

  function literal(text) {
    return text.replace(/[.*+?^${}()|[\]\\\/-]/g, "\\$&");
  }

  // The finder of a lowered query in raw JSON text: its JSON-escaped form, ignoring case.
  // ASCII queries use the engine's case-insensitive search (several times faster than
  // lowering every chunk); others compare lowered text.
  function finder(query) {
    var needle = JSON.stringify(query).slice(1, -1);
    if (/^[\x20-\x7e]*$/.test(needle)) {
      var find = new RegExp(literal(needle), "gi");
      return function (text, found) { linesMatching(text, find, found); };
    }
    var lowered = new RegExp(literal(needle), "g");
    return function (text, found) { linesMatching(text.toLowerCase(), lowered, found); };
  }

  var ESCAPES = /\\u|\\\//g;

  // The positions of chunk `c` whose text holds `query` (lowered). A line can hold it only if
  // its raw JSON holds it JSON-escaped, or the line escapes characters as \uXXXX or \/: those
  // lines are parsed and their text checked; no other line is.
  function scanChunk(c, query, find) {
    return scanText(c).then(function (text) {
      var candidates = new Set();
      find(text, candidates);
      linesMatching(text, ESCAPES, candidates);
      if (candidates.size === 0) return [];
      var lines = text.split("\n");
      var positions = chunkList[c].positions;
      var found = [];
      candidates.forEach(function (line) {
        if (line < positions.length && textOfEntry(parseEntry(lines[line])).toLowerCase().indexOf(query) >= 0) {
          found.push(positions[line]);
        }
      });
      return found;
    });
  }

  var hits = [];
  var shownHits = 0;
  var searchRun = 0;
  var searchTimer = null;
  var RESULTS_PAGE = 200;

  function clearHits() {
    for (var i = 0; i < hits.length; i++) isHit[hits[i]] = 0;
    hits = [];
    shownHits = 0;
  }

  function runSearch() {
    var run = ++searchRun;
    var query = searchInput.value.trim().toLowerCase();
    clearHits();
    resultsEl.textContent = "";
    searchStatus.removeAttribute("data-done");
    if (query.length < 2) {
      resultsEl.hidden = true;
      searchStatus.textContent = "";
      drawTree();
      return Promise.resolve();
    }
    var find = finder(query);
    var found = [];
    searchStatus.textContent = "Searching…";
    return allChunks.then(function () {
      var c = 0;
      var next = function () {
        if (run !== searchRun) return null;
        if (c >= chunkList.length) return finish();
        var at = c++;
        // The next chunks inflate while this one is scanned.
        for (var ahead = at + 1; ahead < Math.min(at + 3, chunkList.length); ahead++) scanText(ahead);
        return scanChunk(at, query, find).then(function (positions) {
          for (var i = 0; i < positions.length; i++) found.push(positions[i]);
          if (at % 16 === 15) {
            searchStatus.textContent = "Searching… " + Math.round(100 * c / chunkList.length) + "% (" + found.length + " so far)";
          }
          return next();
        });
      };
      var finish = function () {
        found.sort(function (a, b) { return rowOf[a] - rowOf[b]; });
        hits = found.filter(function (p) { return rowOf[p] >= 0; });
        for (var i = 0; i < hits.length; i++) isHit[hits[i]] = 1;
        drawTree();
        searchStatus.textContent = hits.length === 0 ? "No match" : hits.length + (hits.length === 1 ? " match" : " matches");
        resultsEl.hidden = false;
        return showMoreResults(query).then(function () {
          if (run === searchRun) searchStatus.setAttribute("data-done", query);
        });
      };
      return next();
    });
  }

  function showMoreResults(query) {
    var run = searchRun;
    var from = shownHits;
    var to = Math.min(hits.length, from + RESULTS_PAGE);
    var more = resultsEl.querySelector(".more-results");
    if (more) more.remove();
    var page = hits.slice(from, to);
    return Promise.all(page.map(entryAt)).then(function (entries) {
      if (run !== searchRun) return;
      var fragment = document.createDocumentFragment();
      for (var i = 0; i < page.length; i++) {
        var pos = page[i];
        var item = el("button", "result " + classOf(pos));
        item.type = "button";
        item.setAttribute("data-entry-id", ids[pos] == null ? "" : ids[pos]);
        item.setAttribute("data-pos", pos);
        item.appendChild(el("span", "role", str(previews[pos]).split(": ")[0]));
        item.appendChild(el("span", "snippet", snippet(entries[i], query)));
        fragment.appendChild(item);
      }
      shownHits = to;
      if (to < hits.length) {
        var button = el("button", "more-results", "Show " + Math.min(RESULTS_PAGE, hits.length - to) + " more (" + (hits.length - to) + " not shown)");
        button.type = "button";
        button.addEventListener("click", function () { showMoreResults(query); });
        fragment.appendChild(button);
      }
      resultsEl.appendChild(fragment);
    });
  }

  // Around the first match, in the entry's own case.
  function snippet(entry, query) {
    var text = textOfEntry(entry);
    var at = Math.max(0, text.toLowerCase().indexOf(query));
    var start = Math.max(0, at - 40);
    return (start > 0 ? "…" : "") + text.slice(start, at + query.length + 80).replace(/\s+/g, " ");
  }

  // ---- wiring ------------------------------------------------------------------------------

  function fromHash() {
    var match = /^#leaf=(.*)$/.exec(location.hash);
    if (!match) return null;
    var id;
    try { id = decodeURIComponent(match[1]); } catch (e) { return null; }
    return byId.has(id) ? byId.get(id) : null;
  }

  function start(skeleton) {
    count = skeleton.count;
    ids = skeleton.ids;
    parents = skeleton.parents;
    rows = skeleton.rows;
    previews = skeleton.previews;
    kinds = skeleton.kinds;
    classes = skeleton.classes;
    labels = skeleton.labels || {};
    leaf = skeleton.leaf;
    for (var i = 0; i < count; i++) if (ids[i] != null) byId.set(ids[i], i);
    inFirst = new Uint8Array(count);
    chunkOf = new Int32Array(count).fill(-1);
    slotOf = new Int32Array(count);
    for (var f = 0; f < skeleton.first.length; f++) inFirst[skeleton.first[f]] = 1;
    addChunk($("pi-chunk-first"), skeleton.first);
    allChunks = parsed.then(registerChunks);
    onActive = new Uint8Array(count);
    onSelected = new Uint8Array(count);
    isHit = new Uint8Array(count);
    if (leaf != null) pathTo(leaf).forEach(function (p) { onActive[p] = 1; });

    renderHeader(skeleton);
    setUpTree();

    treeRowsEl.addEventListener("click", function (event) {
      var node = event.target.closest(".node");
      if (node) select(Number(node.getAttribute("data-pos")), { scrollTree: false });
    });
    window.addEventListener("hashchange", function () {
      var position = fromHash();
      if (position != null && position !== selected) select(position, { updateHash: false });
    });
    searchInput.addEventListener("input", function () {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(runSearch, 150);
    });
    searchInput.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { searchInput.value = ""; runSearch(); }
      if (event.key === "Enter") {
        clearTimeout(searchTimer);
        runSearch().then(function () { if (hits.length) select(hits[0]); });
      }
    });
    resultsEl.addEventListener("click", function (event) {
      var item = event.target.closest(".result");
      if (item) select(Number(item.getAttribute("data-pos")));
    });

    var first = fromHash();
    if (first == null) first = skeleton.selected != null ? skeleton.selected : leaf;
    return select(first, { updateHash: false });
  }

  unpack($("pi-skeleton"))
    .then(function (text) { return start(JSON.parse(text)); })
    .then(function () { document.documentElement.setAttribute("data-ready", "true"); })
    .catch(function (error) {
      conversation.textContent = "";
      conversation.appendChild(el("div", "error", "This page could not read its session: " + error));
      console.error(error);
    });
})();
