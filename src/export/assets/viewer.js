// pi-session's HTML export viewer. The session is data (#pi-session-data); this script shows
// the tree beside the conversation along one path. Session text is only ever set as text or
// as Markdown rendered with raw HTML shown as text; the page's Content-Security-Policy runs
// no other script and fetches nothing.
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("pi-session-data").textContent);
  var entries = data.entries;
  var ids = data.ids;
  var parents = data.parents;
  var count = entries.length;
  var byId = new Map();
  for (var i = 0; i < count; i++) {
    if (ids[i] != null) byId.set(ids[i], i);
  }

  var $ = function (id) { return document.getElementById(id); };
  var treeEl = $("tree");
  var conversation = $("conversation");
  var pathHead = $("path-head");
  var searchInput = $("search");
  var searchStatus = $("search-status");
  var resultsEl = $("results");

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

  function renderEntry(position, article) {
    var entry = entries[position] || {};
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

  function kindClass(entry) {
    if (!entry) return "other";
    if (entry.type === "message" && entry.message) return "role-" + str(entry.message.role);
    return "type-" + str(entry.type);
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

  var activePath = new Set(data.leaf == null ? [] : pathTo(data.leaf));
  var nodesOf = new Map();
  var selected = null;
  var selectedPath = [];
  var observer = null;

  function renderTree() {
    var rows = data.rows;
    var html = [];
    var labels = data.labels || {};
    for (var r = 0; r < rows.length; r += 2) {
      var position = rows[r];
      var indent = rows[r + 1];
      var id = ids[position];
      var entry = entries[position];
      var preview = str(data.previews[position]);
      var colon = preview.indexOf(": ");
      var role = colon > 0 && colon < 20 ? preview.slice(0, colon) : "";
      var text = role ? preview.slice(colon + 2) : preview;
      if (text.length > 1 && text.charAt(0) === '"' && text.charAt(text.length - 1) === '"') text = text.slice(1, -1);
      var cls = "node " + kindClass(entry) + (activePath.has(position) ? " active" : "") +
        (position === data.leaf ? " leaf" : "");
      var label = id != null && Object.prototype.hasOwnProperty.call(labels, id) ? labels[id] : null;
      html.push('<div class="', cls, '" role="treeitem" data-entry-id="', esc(id == null ? "" : id),
        '" data-pos="', position, '" style="--indent:', indent, '">',
        '<span class="dot"></span>',
        role ? '<span class="role">' + esc(role) + "</span>" : "",
        '<span class="preview">', esc(text), "</span>",
        label != null ? '<span class="label">' + esc(str(label)) + "</span>" : "",
        position === data.leaf ? '<span class="leaf-mark">leaf</span>' : "",
        "</div>");
    }
    if (rows.length === 0) html.push('<div class="empty">No entries</div>');
    treeEl.innerHTML = html.join("");
    var nodes = treeEl.children;
    for (var n = 0; n < nodes.length; n++) {
      var pos = Number(nodes[n].getAttribute("data-pos"));
      if (!nodesOf.has(pos)) nodesOf.set(pos, []);
      nodesOf.get(pos).push(nodes[n]);
    }
  }

  function markNodes(positions, cls, on) {
    for (var i = 0; i < positions.length; i++) {
      var nodes = nodesOf.get(positions[i]) || [];
      for (var j = 0; j < nodes.length; j++) nodes[j].classList.toggle(cls, on);
    }
  }

  function select(position, options) {
    options = options || {};
    markNodes(selectedPath, "on-path", false);
    if (selected != null) markNodes([selected], "selected", false);
    selected = position;
    selectedPath = position == null ? [] : pathTo(position);
    markNodes(selectedPath, "on-path", true);
    if (position != null) markNodes([position], "selected", true);
    renderConversation();
    if (position != null && options.updateHash !== false && ids[position] != null) {
      history.replaceState(null, "", "#leaf=" + encodeURIComponent(ids[position]));
    }
    if (position != null) {
      var nodes = nodesOf.get(position);
      if (nodes && options.scrollTree !== false) nodes[0].scrollIntoView({ block: "nearest" });
      showEntry(position);
    }
  }

  // A long path is shown in pages from its end: the DOM holds what was asked for, not every
  // entry of a 100 MB session. Earlier pages load when the reader scrolls up to them.
  var PAGE = 150;
  var shownFrom = 0;
  var earlier = null;

  function makeArticle(position) {
    var entry = entries[position] || {};
    var article = el("article", "entry " + kindClass(entry) + (activePath.has(position) ? "" : " off-active"));
    article.setAttribute("data-entry-id", ids[position] == null ? "" : ids[position]);
    article.setAttribute("data-pos", position);
    var head = el("div", "entry-head");
    head.appendChild(el("span", "kind", str(entry.type)));
    head.appendChild(el("span", "extra"));
    var link = el("a", "time", formatTime(entry.timestamp));
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

  function fill(article) {
    if (article.tagName !== "ARTICLE" || article.classList.contains("filled")) return;
    article.classList.add("filled");
    if (observer) observer.unobserve(article);
    renderEntry(Number(article.getAttribute("data-pos")), article);
  }

  function showEntry(position) {
    var article = conversation.querySelector('article[data-pos="' + position + '"]');
    if (!article) return;
    // Fill it and, before it, what covers the screen: the entries that come into view are
    // drawn before the scroll, and later ones render above the view without moving it.
    var screen = $("main").clientHeight;
    var covered = 0;
    var previous = article;
    while (previous && previous.tagName === "ARTICLE" && covered < 2 * screen) {
      fill(previous);
      covered += previous.offsetHeight;
      previous = previous.previousElementSibling;
    }
    conversation.querySelectorAll(".entry.target").forEach(function (a) { a.classList.remove("target"); });
    article.classList.add("target");
    // The selected entry ends its path: it is shown at the bottom, the way the conversation
    // led to it, unless it is taller than the screen.
    var tall = article.offsetHeight > $("main").clientHeight * 0.7;
    article.scrollIntoView({ block: tall ? "start" : "end" });
  }

  function renderPathHead() {
    pathHead.textContent = "";
    var info = el("div", "path-info");
    var onActive = selected == null || activePath.has(selected);
    info.appendChild(el("span", "path-count", selectedPath.length + " entries on this path"));
    info.appendChild(el("span", onActive ? "badge active" : "badge other",
      selected === data.leaf ? "the session's leaf" : onActive ? "on the active path" : "on another branch"));
    if (selected !== data.leaf && data.leaf != null) {
      var back = el("button", "to-leaf", "Show the leaf");
      back.type = "button";
      back.addEventListener("click", function () { select(data.leaf); });
      info.appendChild(back);
    }
    pathHead.appendChild(info);
  }

  // ---- header ------------------------------------------------------------------------------

  function renderHeader() {
    var header = data.header || {};
    var title = data.name || "Session " + str(header.id);
    $("title").textContent = title;
    var meta = $("meta");
    var rows = [
      ["cwd", str(header.cwd)],
      ["started", header.timestamp ? formatTime(header.timestamp) : ""],
      ["entries", String(count)],
      ["file", str(data.file)],
    ];
    if (header.parentSession) rows.push(["forked from", str(header.parentSession)]);
    for (var i = 0; i < rows.length; i++) {
      if (!rows[i][1]) continue;
      var line = el("div", "meta-row");
      line.appendChild(el("span", "meta-key", rows[i][0]));
      line.appendChild(el("span", "meta-value", rows[i][1]));
      meta.appendChild(line);
    }
  }

  // ---- search ------------------------------------------------------------------------------

  var searchText = null;
  var SKIP_KEYS = { id: 1, parentId: 1, timestamp: 1, data: 1, signature: 1, thinkingSignature: 1, textSignature: 1, type: 1 };

  function collect(value, out) {
    if (typeof value === "string") out.push(value);
    else if (Array.isArray(value)) for (var i = 0; i < value.length; i++) collect(value[i], out);
    else if (value && typeof value === "object") {
      for (var key in value) if (!SKIP_KEYS[key]) collect(value[key], out);
    }
  }

  function searchable(position) {
    if (!searchText) searchText = new Array(count);
    var text = searchText[position];
    if (text == null) {
      var parts = [];
      collect(entries[position], parts);
      text = searchText[position] = parts.join("\n").toLowerCase();
    }
    return text;
  }

  var hits = [];
  var searchTimer = null;

  function runSearch() {
    var query = searchInput.value.trim().toLowerCase();
    markNodes(hits, "hit", false);
    hits = [];
    resultsEl.textContent = "";
    if (query.length < 2) {
      resultsEl.hidden = true;
      searchStatus.textContent = "";
      return;
    }
    for (var r = 0; r < data.rows.length; r += 2) {
      var position = data.rows[r];
      if (searchable(position).indexOf(query) >= 0) hits.push(position);
    }
    markNodes(hits, "hit", true);
    searchStatus.textContent = hits.length === 0 ? "No match" : hits.length + (hits.length === 1 ? " match" : " matches");
    var shown = Math.min(hits.length, 200);
    for (var i = 0; i < shown; i++) {
      var pos = hits[i];
      var item = el("button", "result " + kindClass(entries[pos]));
      item.type = "button";
      item.setAttribute("data-entry-id", ids[pos] == null ? "" : ids[pos]);
      item.setAttribute("data-pos", pos);
      item.appendChild(el("span", "role", str(data.previews[pos]).split(": ")[0]));
      item.appendChild(el("span", "snippet", snippet(pos, query)));
      resultsEl.appendChild(item);
    }
    if (hits.length > shown) resultsEl.appendChild(el("div", "note", (hits.length - shown) + " more in the tree"));
    resultsEl.hidden = false;
  }

  // Around the first match, in the entry's own case.
  function snippet(position, query) {
    var parts = [];
    collect(entries[position], parts);
    var text = parts.join("\n");
    var at = Math.max(0, text.toLowerCase().indexOf(query));
    var start = Math.max(0, at - 40);
    return (start > 0 ? "…" : "") + text.slice(start, at + query.length + 80).replace(/\s+/g, " ");
  }

  searchInput.addEventListener("input", function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(runSearch, 150);
  });
  searchInput.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { searchInput.value = ""; runSearch(); }
    if (event.key === "Enter") {
      clearTimeout(searchTimer);
      runSearch();
      if (hits.length) select(hits[0]);
    }
  });
  resultsEl.addEventListener("click", function (event) {
    var item = event.target.closest(".result");
    if (item) select(Number(item.getAttribute("data-pos")));
  });

  // ---- wiring ------------------------------------------------------------------------------

  treeEl.addEventListener("click", function (event) {
    var node = event.target.closest(".node");
    if (node) select(Number(node.getAttribute("data-pos")), { scrollTree: false });
  });

  function fromHash() {
    var match = /^#leaf=(.*)$/.exec(location.hash);
    if (!match) return null;
    var id;
    try { id = decodeURIComponent(match[1]); } catch (e) { return null; }
    return byId.has(id) ? byId.get(id) : null;
  }

  window.addEventListener("hashchange", function () {
    var position = fromHash();
    if (position != null && position !== selected) select(position, { updateHash: false });
  });

  renderHeader();
  renderTree();
  var start = fromHash();
  if (start == null) start = data.selected != null ? data.selected : data.leaf;
  select(start, { updateHash: false });
  document.documentElement.setAttribute("data-ready", "true");
})();
