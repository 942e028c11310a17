"""The one-key jumps of the notebook's conversation view (``ConversationView``): the script that reads the keys.

The keys are the report's (``conversation_places.JUMPS``, ``FIND_STEPS`` and ``FIND_BOX_KEY``: one table for every
face). An HTML widget runs no ``<script>``, so the script is installed once per page by an image that cannot load,
as the run browser's is (``runs_page.SCRIPT``), and a key comes back to Python the same way: the script writes
``<nonce> key <key>`` into the view's hidden text box (``KEY_ACTIONS``), whose own front end sends the value, and
``ConversationView.act`` does what the key asks.

A key is read when the keyboard is in a conversation view and not in a field (a find box, the seq box, a chooser):
there it is a letter typed. A click on the view's text gives it the keyboard (the script makes the view focusable
as the pointer goes down), so the keys work after a click anywhere in it, as they do in the report.
"""

from __future__ import annotations

import json
from typing import Final

from journaltools.exports.conversation_places import FIND_BOX_KEY, FIND_STEPS, JUMPS
from journaltools.exports.html import esc

#: The class of the hidden text box a key travels through (``ConversationView.keys``).
KEY_ACTIONS: Final = "jt-conversation-keys"
#: The class of the view's find bar, whose box ``FIND_BOX_KEY`` gives the keyboard to.
FIND_BAR: Final = "jt-find-bar"
#: Every key the script sends to Python: the jumps, then the steps through what was found.
SENT_KEYS: Final = (*(key for key, _kind in JUMPS), *FIND_STEPS)

# On the window, before anything else: JupyterLab's command mode reads single letters too ("a" adds a cell, "d d"
# deletes one), and leaves a key whose propagation was stopped.
_CODE: Final = f"""if (!window.__jtConversationKeys) {{ window.__jtConversationKeys = true;
var sent = {json.dumps(list(SENT_KEYS))}, findKey = {json.dumps(FIND_BOX_KEY)};
var viewOf = function (el) {{
  for (var node = el; node; node = node.parentElement) {{
    if (node.classList && node.classList.contains('jt-conversation')) {{
      var box = node.querySelector(':scope > .{KEY_ACTIONS} input');
      if (box) return {{view: node, box: box}};
    }}
  }}
  return null;
}};
window.addEventListener('pointerdown', function (event) {{
  var found = viewOf(event.target);
  if (found && !found.view.hasAttribute('tabindex')) found.view.setAttribute('tabindex', '-1');
}}, true);
window.addEventListener('keydown', function (event) {{
  var target = event.target;
  if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing || !target || !target.closest) return;
  if (target.closest('input, textarea, select, [contenteditable]')) return;
  var found = viewOf(target);
  if (!found) return;
  if (event.key === findKey) {{
    var field = found.view.querySelector(':scope > .{FIND_BAR} input');
    if (!field) return;
    event.preventDefault(); event.stopPropagation(); field.focus(); return;
  }}
  if (sent.indexOf(event.key) < 0) return;
  event.preventDefault(); event.stopPropagation();
  found.box.value = Date.now() + '-' + Math.random() + ' key ' + event.key;
  found.box.dispatchEvent(new Event('input', {{bubbles: true}}));
}}, true); }}"""

#: The image that installs the script (fixed text, no journal content; escaped as the attribute it is).
SCRIPT: Final = f'<img alt="" hidden src="data:," onerror="{esc(_CODE)}">'


def key_of(value: str) -> str | None:
    """The key a value of the hidden box names (``<nonce> key <key>``, the nonce so that one key pressed twice is
    two changes), or None for anything else."""
    _nonce, _, rest = value.partition(" ")
    action, _, key = rest.partition(" ")
    return key if action == "key" and key in SENT_KEYS else None
