// coderooms web UI: the few things a page does with JavaScript on. Every page reads the
// same with it off; this adds live updates, paging on scroll and the brevity counter.
"use strict";

(function () {
  function keyOf(el) {
    return el.getAttribute("data-root") || el.id || null;
  }

  // Whether `el` may be swapped for a fresh copy without taking something from the
  // person: not while it holds the keyboard focus (a half-typed search, a Pin button).
  function replaceable(el) {
    return !el.contains(document.activeElement);
  }

  // `fresh` in the place of `old`, with the folds the person opened kept open.
  function swap(old, fresh) {
    var opened = old.querySelectorAll("details");
    var coming = fresh.querySelectorAll("details");
    Array.prototype.forEach.call(opened, function (d, i) {
      if (d.open && coming[i]) { coming[i].open = true; }
    });
    old.replaceWith(fresh);
  }

  // Bring the children of `fresh` into `current`: replace the ones both hold that
  // changed (a thread that got a reply), append the new ones; an entry that did not
  // change is left alone. Rows are never removed from a log.
  function merge(current, fresh) {
    Array.prototype.slice.call(fresh.children).forEach(function (child) {
      var key = keyOf(child);
      var old = null;
      if (key) {
        Array.prototype.some.call(current.children, function (el) {
          if (keyOf(el) === key) { old = el; return true; }
          return false;
        });
      }
      if (!old) { current.appendChild(child); return; }
      if (!old.isEqualNode(child) && replaceable(old)) { swap(old, child); }
    });
  }

  function fetchDoc(url) {
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (text) { return new DOMParser().parseFromString(text, "text/html"); });
  }

  function refresh() {
    return fetchDoc(location.pathname + location.search).then(function (doc) {
      var nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
      var transcript = document.getElementById("transcript");
      var fresh = doc.getElementById("transcript");
      if (transcript && fresh) { merge(transcript, fresh); }
      ["sidebar", "desk-table"].forEach(function (id) {
        var here = document.getElementById(id), there = doc.getElementById(id);
        if (here && there && !here.isEqualNode(there) && replaceable(here)) { swap(here, there); }
      });
      if (nearBottom) { window.scrollTo(0, document.body.scrollHeight); }
      document.body.setAttribute("data-refreshed", String(Date.now()));
    });
  }

  function live() {
    var url = document.body.getAttribute("data-live");
    if (!url || !window.EventSource) { return; }
    var source = new EventSource(url);
    var busy = false, again = false;
    source.addEventListener("change", function () {
      if (busy) { again = true; return; }
      busy = true;
      refresh().finally(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
    });
  }

  // Scrolling to the top of a desk loads the older page in place, through the same
  // ?before= link a reader without JavaScript follows.
  function paging() {
    var transcript = document.getElementById("transcript");
    if (!transcript) { return; }
    // a desk reads bottom-up: open at the newest message, beside the compose box
    if (!location.hash && !/[?&]before=/.test(location.search)) {
      window.scrollTo(0, document.body.scrollHeight);
    }
    if (!transcript.hasAttribute("data-before")) { return; }
    var loading = false;
    window.addEventListener("scroll", function () {
      var before = transcript.getAttribute("data-before");
      if (loading || !before || window.scrollY > 40) { return; }
      loading = true;
      var url = location.pathname + "?before=" + encodeURIComponent(before);
      fetchDoc(url).then(function (doc) {
        var older = doc.getElementById("transcript");
        if (!older) { return; }
        var height = document.body.scrollHeight;
        Array.prototype.slice.call(older.children).reverse().forEach(function (child) {
          transcript.insertBefore(child, transcript.firstChild);
        });
        var next = older.getAttribute("data-before");
        if (next) { transcript.setAttribute("data-before", next); }
        else {
          transcript.removeAttribute("data-before");
          var link = document.querySelector("a.older");
          if (link) { link.remove(); }
        }
        window.scrollTo(0, document.body.scrollHeight - height);
      }).finally(function () { loading = false; });
    });
  }

  function brevity() {
    document.querySelectorAll("textarea[data-brevity]").forEach(function (area) {
      var limit = parseInt(area.getAttribute("data-brevity"), 10);
      var counter = area.form && area.form.querySelector("output.counter");
      if (!counter) { return; }
      function update() {
        // characters as the room counts them (code points: an emoji is one, not the
        // two UTF-16 units .length counts); line breaks are stored as one each
        var n = Array.from(area.value).length;
        counter.textContent = n + " / " + limit + (n > limit ? " (over by " + (n - limit) + ")" : "");
        counter.classList.toggle("over", n > limit);
      }
      area.addEventListener("input", update);
      update();
    });
  }

  live();
  paging();
  brevity();
})();
