// The trajectory viewer's script (report/trajectory_viewer.h), inline in the report. It builds
// every element with textContent, never innerHTML, so a kernel or a feedback text is shown as
// text whatever it holds. Navigation: the four selects cascade (model → task → variant →
// trajectory), turn tabs pick the turn, a matrix cell picks its group's first trajectory, and
// "#viewer=INDEX&turn=N" in the address opens that turn (links, and the browser test).
#pragma once

namespace ptxb {

inline constexpr const char* kViewerScript = R"JS(
(function () {
  'use strict';
  var all = JSON.parse(document.getElementById('viewer-data').textContent).trajectories;
  var keys = ['model', 'task', 'variant', 'trajectory'];
  var select = {};
  keys.forEach(function (k) { select[k] = document.getElementById('viewer-' + k); });
  var tabs = document.getElementById('viewer-turns');
  var panel = document.getElementById('viewer-turn');
  var current = -1, currentTurn = 0;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function num(x, digits) { return x === null || x === undefined ? '—' : Number(x).toFixed(digits); }
  function matching(level) {
    var out = [];
    all.forEach(function (t, i) {
      for (var k = 0; k < level; ++k) if (t[keys[k]] !== select[keys[k]].value) return;
      out.push(i);
    });
    return out;
  }
  function fill(level, value) {
    var box = select[keys[level]], seen = {};
    while (box.firstChild) box.removeChild(box.firstChild);
    matching(level).forEach(function (i) {
      var v = all[i][keys[level]];
      if (seen[v]) return;
      seen[v] = true;
      var label = v;
      if (keys[level] === 'trajectory') label = v + ' (' + all[i].arch + ')';
      var option = add(box, el('option', '', label));
      option.value = v;
    });
    if (value !== undefined && seen[value]) box.value = value;
  }
  function pick(index, turn) {
    if (index < 0 || index >= all.length) return;
    for (var level = 0; level < keys.length; ++level) fill(level, all[index][keys[level]]);
    current = index;
    var turns = all[index].turns;
    currentTurn = turn || (turns.length ? turns[turns.length - 1].turn : 0);
    show();
  }
  function changed(level) {
    for (var k = level + 1; k < keys.length; ++k) fill(k);
    var found = matching(keys.length);
    if (found.length) pick(found[0]);
  }
  keys.forEach(function (k, level) {
    select[k].addEventListener('change', function () { changed(level); });
  });

  function row(table, name, value) {
    var tr = add(table, el('tr'));
    add(tr, el('th', '', name));
    add(tr, el('td', '', value));
  }
  function speedupText(t) {
    if (t.speedup === null) return 'not measured';
    var text = num(t.speedup, 3) + '×';
    if (t.speedup_low !== null && t.speedup_high !== null)
      text += ' (95 % interval ' + num(t.speedup_low, 3) + '–' + num(t.speedup_high, 3) + '×)';
    return text;
  }
  function showTurn(traj, t) {
    panel.dataset.model = traj.model;
    panel.dataset.task = traj.task;
    panel.dataset.variant = traj.variant;
    panel.dataset.trajectory = traj.trajectory;
    panel.dataset.turn = t.turn;
    add(panel, el('h3', '', traj.model + ' · ' + traj.task + ' · ' + traj.arch + ' · ' +
        traj.variant + ' · ' + traj.trajectory + ' — turn ' + t.turn + ' of ' + traj.turns.length));
    var verdicts = add(panel, el('table', 'verdicts'));
    row(verdicts, 'status', t.status + (t.reason ? ' (' + t.reason + ')' : '') +
        (t.no_code_reason ? ': ' + t.no_code_reason : ''));
    if (t.compile) row(verdicts, 'compile', t.compile);
    if (t.eval_message) row(verdicts, 'evaluation', t.eval_message);
    row(verdicts, 'speedup', speedupText(t));
    if (t.also_reference_speedup !== null)
      row(verdicts, 'speedup vs second reference', num(t.also_reference_speedup, 3) + '×');
    row(verdicts, 'target instructions', t.target_instructions +
        (t.inst_reason ? ': ' + t.inst_reason : ''));
    row(verdicts, 'tokens', 'prompt ' + t.tokens.prompt + ', completion ' + t.tokens.completion +
        ', reasoning ' + t.tokens.reasoning);
    row(verdicts, 'time', 'model ' + num(t.wall_s.model, 1) + ' s, evaluation ' +
        num(t.wall_s.eval, 1) + ' s' + (t.started ? ' (' + t.started + ' to ' + t.finished + ')' : ''));
    if (t.note) add(panel, el('p', 'note', t.note));
    if (t.families && t.families.length) {
      var fam = add(panel, el('table', 'families'));
      var head = add(fam, el('tr'));
      ['family', 'static SASS instructions', 'executed (warp-level)'].forEach(function (h) {
        add(head, el('th', '', h));
      });
      t.families.forEach(function (f) {
        var tr = add(fam, el('tr'));
        add(tr, el('td', '', f.family));
        add(tr, el('td', '', f.static));
        add(tr, el('td', '', f.executed === null ? 'not measured' : f.executed));
      });
    }
    if (t.diff) {
      add(panel, el('h4', '', 'Changes since the previous kernel (+' + t.diff.added + ' −' +
          t.diff.removed + ' lines' + (t.diff.coarse ? ', too large for a line-by-line diff' : '') + ')'));
      var pre = add(panel, el('pre', 'diff'));
      t.diff.hunks.forEach(function (h) {
        var cls = h[0] === '+' ? 'add' : h[0] === '-' ? 'del' : 'same';
        add(pre, el('span', cls, (h[0] === '=' ? '  ' : h[0] + ' ') + h[1] + '\n'));
      });
    }
    if (t.source) {
      var lines = t.source.split('\n').length;
      var box = add(panel, el('details', 'source'));
      if (!t.diff) box.open = true;
      add(box, el('summary', '', 'Kernel source (' + lines + ' lines)' +
          (t.source_note ? ', ' + t.source_note : '')));
      add(box, el('pre', 'source', t.source));
    } else if (t.source_note) {
      add(panel, el('p', 'note', 'Kernel source: ' + t.source_note));
    }
    if (t.feedback) {
      add(panel, el('h4', '', 'Feedback the model read'));
      add(panel, el('pre', 'feedback', t.feedback));
    }
  }
  function show() {
    while (tabs.firstChild) tabs.removeChild(tabs.firstChild);
    while (panel.firstChild) panel.removeChild(panel.firstChild);
    if (current < 0) return;
    var traj = all[current], chosen = null;
    traj.turns.forEach(function (t) {
      var button = add(tabs, el('button', 'turn-tab ' + t.status.toLowerCase(),
                                'turn ' + t.turn + ': ' + t.status));
      button.dataset.turn = t.turn;
      if (t.turn === currentTurn) { button.classList.add('current'); chosen = t; }
      button.addEventListener('click', function () { currentTurn = t.turn; show(); });
    });
    if (chosen) showTurn(traj, chosen);
    else add(panel, el('p', 'empty', 'This trajectory has no recorded turn.'));
    try { history.replaceState(null, '', '#viewer=' + current + '&turn=' + currentTurn); } catch (e) {}
  }

  document.querySelectorAll('td.cell[data-model]').forEach(function (cell) {
    cell.addEventListener('click', function () {
      for (var i = 0; i < all.length; ++i) {
        var t = all[i];
        if (t.model === cell.dataset.model && t.task === cell.dataset.task && t.arch === cell.dataset.arch) {
          pick(i);
          document.getElementById('viewer').scrollIntoView();
          return;
        }
      }
    });
  });
  var wanted = /viewer=(\d+)(?:&turn=(\d+))?/.exec(location.hash);
  if (all.length) pick(wanted ? Number(wanted[1]) : 0, wanted && wanted[2] ? Number(wanted[2]) : 0);
  if (wanted) document.getElementById('viewer').scrollIntoView();
})();
)JS";

}  // namespace ptxb
