"""Issue 33 item 8: a code block's copy button copies what the block shows — not an
ESC that ends a terminal's bracketed paste, a backspace that hides what precedes
it, or a bidi override that makes code read otherwise than it runs."""

from __future__ import annotations

from streampace.browser.markdown_dom import clipboard_text


def test_controls_that_show_nothing_but_act_when_pasted_are_left_out() -> None:
    shown = "echo safe[201~\n\tindented\n"  # "[201~" shows: it stays, its ESC goes
    hostile = ("echo safe\x1b[201~\x08\x7f\x9b\n\tindented\r\n"
               "\u202e\u2066\u202a\u2069\u202c")
    assert clipboard_text(hostile) == shown


def test_everything_visible_stays_as_it_is() -> None:
    text = ("def f(x):\n\treturn x  # Grüße 漢字 👩🏽‍💻 🇫🇷 e\u0301 \u00a0"
            "\u200d\ufe0f \u05e9\u05dc\u05d5\u05dd\n")
    assert clipboard_text(text) == text
