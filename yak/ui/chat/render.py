"""What the transcript shows as text: the assistant's Markdown as HTML, and tool-call lines.

Markdown goes through ``markdown-it-py`` to HTML shown in a ``QTextBrowser``, rather than Qt's own
``QTextDocument.setMarkdown``: markdown-it escapes raw HTML in a reply (``html=False``), so a model
cannot inject markup, images or styles into the window; it refuses unsafe link schemes
(``javascript:``); and it is a pure function of the text, tested without a display.

Everything here is pure (no Qt): :func:`settled_length` finds where a streaming reply can be cut
for good, and :func:`result_summary` makes a stored tool result's compact outcome (the call's
target is :func:`yak.text.tool_target`, as the agent shows it while the call runs).
"""

from __future__ import annotations

from markdown_it import MarkdownIt

from yak.text import shorten as text_shorten

# Display caps: a target longer than this is shortened in the header (full text in the tooltip).
_TARGET_DISPLAY_CHARS = 120

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])

# The agent ends a reply cut short by Stop with a text block holding just this.
STOPPED_MARK = "[stopped]"


def render_markdown(text: str) -> str:
    """Render the assistant's Markdown to HTML for a ``QTextBrowser``.

    Raw HTML in ``text`` is shown as text, not interpreted; links with unsafe schemes stay text.

    Args:
        text: CommonMark with tables and strikethrough.

    Returns:
        An HTML fragment.
    """
    # A fenced block's last line ends with a newline, which Qt draws as an empty last line.
    return _MARKDOWN.render(text).replace("\n</code></pre>", "</code></pre>")


def settled_length(text: str) -> int:
    """How much of a streaming Markdown text can be rendered on its own for good.

    The cut goes after the last blank line that is outside a fenced code block and not followed
    by an indented line (an indented line may continue a list item or an indented code block).

    Args:
        text: the Markdown received so far.

    Returns:
        A length in characters; 0 when there is no such paragraph break.
    """
    best = 0
    fence: str | None = None  # the opening fence's marker while inside a fenced block
    position = 0
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        position += len(line)
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if indent <= 3 and stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            run = len(stripped) - len(stripped.lstrip(marker[0]))
            if fence is None:
                fence = marker[0] * run
            elif stripped.startswith(fence) and not stripped.strip().lstrip(fence[0]):
                fence = None
            continue
        if fence is not None or line.strip() or index + 1 >= len(lines):
            continue
        following = lines[index + 1]
        if following.strip() and not following.startswith((" ", "\t")):
            best = position
    return best


def tool_result_text(block: dict) -> str:
    """The text of a stored ``tool_result`` block (its content is a string or a list of blocks)."""
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _first_line(text: str, limit: int = 100) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return text_shorten(line, limit)


def result_summary(text: str) -> str:
    """A stored tool result's outcome in a few words: its first line up to the first ": " or
    ". " ("Denied by the user: this call was not run…" → "Denied by the user")."""
    line = _first_line(text, 200)
    for separator in (": ", ". "):
        head = line.split(separator, 1)[0]
        if len(head) >= 8:
            line = head
    return _first_line(line)


def shorten(text: str, limit: int = _TARGET_DISPLAY_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when it was longer."""
    return text_shorten(text, limit)
